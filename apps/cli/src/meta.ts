import type { Argument, Command as Commander, Option } from 'commander';
import type { CommandId, PickerFamily } from '@lintel/commands';

/**
 * What the commander tree itself does not say, kept beside it (never as text in the help): which values an
 * option or argument takes, for shell completion and the palette's choice lists; and which commands the
 * interactive palette offers, with the arguments it must ask for.
 */

/** Values now (a list) or read when asked (the contexts of the config file). */
export type Values = readonly string[] | (() => readonly string[]);

export interface ValueHint {
  values?: Values;
  /** a file path: the shell completes file names */
  files?: boolean;
  /** several values, comma-separated (`--fields id,name`): each item is completed */
  list?: boolean;
}

const hints = new WeakMap<Option | Argument, ValueHint>();

export function setHint<T extends Option | Argument>(target: T, hint: ValueHint): T {
  hints.set(target, hint);
  return target;
}

/** The hint of an option or argument; `.choices()` of commander counts as one. */
export function hintOf(target: Option | Argument): ValueHint | undefined {
  return hints.get(target) ?? (target.argChoices ? { values: target.argChoices } : undefined);
}

export const valuesOf = (hint: ValueHint | undefined): readonly string[] => {
  const v = hint?.values;
  return typeof v === 'function' ? v() : (v ?? []);
};

/** One value the palette asks for before it runs a command. */
export interface Ask {
  /** what the person reads: the field's label */
  label: string;
  /** `--login` for a flag; absent for a positional argument, given in order */
  flag?: string;
  /** a choice list instead of a text box */
  choices?: Values;
  /** a short note under the box: "comma-separated", "number", "JSON", "file" */
  note?: string;
  /** ids of another family's rows: the palette lists them by name (several for a list) */
  ref?: { family: PickerFamily; many: boolean };
  /** a flag that takes no value (`--dry-run`, `--all`): picking it adds it, nothing is asked */
  switch?: boolean;
}

/** A command the palette offers. */
export interface Offer {
  /** the registry command whose gates decide whether the user may run it (none: everyone signed in) */
  gate?: CommandId;
  /** the title's locale key (`commands:user.list.label`, `cli:whoami.description`), read in every language */
  titleKey: string;
  asks: Ask[];
  /** the optional arguments a person may add after the required ones */
  options?: Ask[];
}

const offers = new WeakMap<Commander, Offer>();

export function offer(cmd: Commander, o: Offer): Commander {
  offers.set(cmd, o);
  return cmd;
}

export const offerOf = (cmd: Commander): Offer | undefined => offers.get(cmd);
