import { atom } from 'jotai';
import type { CommandFormOptions } from '../forms/use-command-form';
import type { DialogWidth } from '../ui/dialog';
import { appStore } from '../store';

/** The dialogs the layout shows over any page, newest on top. */
export type HostDialog =
  | {
      kind: 'form';
      key: number;
      commandId: string;
      options: CommandFormOptions;
      width?: DialogWidth;
      onDone?: (result: unknown) => void;
    }
  | { kind: 'result'; key: number; commandId: string; result: unknown }
  | {
      kind: 'confirm';
      key: number;
      title: string;
      message: string;
      approveLabel: string;
      danger: boolean;
      resolve: (ok: boolean) => void;
    }
  | { kind: 'shortcuts'; key: number };

export const dialogsAtom = atom<HostDialog[]>([]);

let next = 1;

type WithoutKey<T> = T extends unknown ? Omit<T, 'key'> : never;

export function openDialog(d: WithoutKey<HostDialog>): number {
  const key = next++;
  appStore.set(dialogsAtom, (list) => [...list, { ...d, key } as HostDialog]);
  return key;
}

export function closeDialog(key: number): void {
  appStore.set(dialogsAtom, (list) => list.filter((d) => d.key !== key));
}

/** Opens a command's generated form in a dialog. */
export function openCommandForm(
  commandId: string,
  options: CommandFormOptions = {},
  extra: { width?: DialogWidth; onDone?: (result: unknown) => void } = {},
): number {
  return openDialog({ kind: 'form', commandId, options, ...extra });
}

/** Asks for a yes or no (spec part 1 §2.4 "confirmation (approve/cancel)"). */
export function confirmAction(opts: {
  title: string;
  message: string;
  approveLabel: string;
  danger?: boolean;
}): Promise<boolean> {
  return new Promise((resolve) => {
    openDialog({ kind: 'confirm', danger: false, ...opts, resolve });
  });
}
