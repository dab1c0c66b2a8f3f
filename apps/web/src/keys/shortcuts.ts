import { useId } from 'react';
import { useHotkeys, useHotkeysContext, type HotkeyCallback } from 'react-hotkeys-hook';
import { binding, type KeyScope } from './bindings';

/**
 * Every key binding of the console goes through here, with a locale key for its description, so that `?`
 * can list the keys in force on the current screen (react-hotkeys-hook's provider keeps the registry). The
 * keys themselves are declared once, in `keys/bindings.ts`, under that locale key: the table wins over the
 * `keys` written at the call, which must agree with it (a disagreement is reported on the console).
 */
export interface ShortcutOptions {
  /** locale key (namespace `web`) of what the key does */
  labelKey: string;
  enabled?: boolean;
  /** also while typing in an input (Ctrl/Cmd+K, Escape) */
  inInputs?: boolean;
  /**
   * also for keys pressed inside a dialog (Ctrl/Cmd+K, `?`). Off by default: a page's keys (a table's j/k,
   * `n`, Ctrl+Enter of a page form) must not act behind the dialog that has the focus.
   */
  inDialogs?: boolean;
  preventDefault?: boolean;
}

const insideDialog = (e: KeyboardEvent) => e.target instanceof Element && !!e.target.closest('dialog');

export function useShortcut(
  keys: string,
  handler: HotkeyCallback,
  options: ShortcutOptions,
  deps: unknown[] = [],
) {
  // the provider removes bindings by equality: two screens binding the same key must not remove each other's
  const owner = useId();
  const declared = binding(options.labelKey);
  if (declared.keys !== keys)
    console.error(
      `key ${options.labelKey}: bound to ${keys}, declared as ${declared.keys} in keys/bindings.ts`,
    );
  return useHotkeys(
    declared.keys,
    handler,
    {
      enabled: options.enabled ?? true,
      enableOnFormTags: options.inInputs ?? false,
      enableOnContentEditable: options.inInputs ?? false,
      preventDefault: options.preventDefault ?? true,
      ignoreEventWhen: options.inDialogs ? undefined : insideDialog,
      description: options.labelKey,
      // disabled bindings stay registered with the provider: `?` leaves them out by this flag
      metadata: {
        labelKey: options.labelKey,
        enabled: options.enabled ?? true,
        owner,
        scope: declared.scope,
      },
    },
    [handler, ...deps],
  );
}

export interface ShortcutInForce {
  keys: string;
  labelKey: string;
  scope: KeyScope;
}

/** The bindings mounted right now, for the `?` overlay. */
export function useShortcutsInForce(): ShortcutInForce[] {
  const { hotkeys } = useHotkeysContext();
  const seen = new Set<string>();
  const out: ShortcutInForce[] = [];
  for (const h of hotkeys) {
    const labelKey = h.metadata?.labelKey;
    if (typeof labelKey !== 'string' || h.metadata?.enabled === false) continue;
    // each key once, however many screens or rows bind it
    if (seen.has(labelKey)) continue;
    seen.add(labelKey);
    out.push({ keys: binding(labelKey).keys, labelKey, scope: binding(labelKey).scope });
  }
  return out;
}
