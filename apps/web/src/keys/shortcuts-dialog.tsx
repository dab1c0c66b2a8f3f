import { useTranslation } from 'react-i18next';
import { Dialog } from '../ui/dialog';
import { SCOPE_ORDER, keysOf } from './bindings';
import { useShortcutsInForce } from './shortcuts';

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

const NAMES: Record<string, string> = {
  mod: isMac ? '⌘' : 'Ctrl',
  ctrl: 'Ctrl',
  meta: '⌘',
  alt: isMac ? '⌥' : 'Alt',
  shift: '⇧',
  enter: '↵',
  escape: 'Esc',
  slash: '/',
  up: '↑',
  down: '↓',
  left: '←',
  right: '→',
  space: '␣',
  backspace: '⌫',
  delete: 'Del',
  pageup: 'PgUp',
  pagedown: 'PgDn',
  home: 'Home',
  end: 'End',
  tab: 'Tab',
};

/**
 * A key as it is typed: `mod+k` → [Ctrl, k]; `shift+slash` → [?]; `shift+g` → [G]; `g>u` → [[g], [u]] (a
 * sequence). Letters stay lowercase unless Shift makes them capitals.
 */
export function keyCaps(hotkey: string): string[][] {
  return hotkey.split('>').map((step) => {
    const parts = step.split('+');
    if (parts.length === 2 && parts[0] === 'shift' && parts[1] === 'slash') return ['?'];
    if (parts.length === 2 && parts[0] === 'shift' && /^[a-z]$/.test(parts[1] ?? ''))
      return [parts[1]!.toUpperCase()];
    return parts.map((p) => NAMES[p] ?? p);
  });
}

function Keys({ hotkey }: { hotkey: string }) {
  return (
    <span className="inline-flex items-center gap-2">
      {keysOf(hotkey).map((k) => (
        <Steps key={k} hotkey={k} />
      ))}
    </span>
  );
}

function Steps({ hotkey }: { hotkey: string }) {
  const { t } = useTranslation();
  const steps = keyCaps(hotkey);
  return (
    <span className="inline-flex items-center gap-1" data-testid="shortcut-keys">
      {steps.map((caps, i) => (
        <span key={i} className="inline-flex items-center gap-0.5">
          {i > 0 && <span className="px-0.5 text-[11px] text-slate-500">{t('keys.then')}</span>}
          {caps.map((c, j) => (
            <kbd
              key={j}
              className="inline-flex h-5 min-w-5 items-center justify-center rounded border border-slate-300 bg-slate-50 px-1 font-mono text-[11px] text-slate-700 shadow-[0_1px_0_rgb(203_213_225)]"
            >
              {c}
            </kbd>
          ))}
        </span>
      ))}
    </span>
  );
}

/**
 * `?`: every key binding in force on the current screen, with what it does, grouped by scope (the form or
 * table in view first, the keys of every screen last), each key once.
 */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const list = useShortcutsInForce();
  const tr = t as unknown as (k: string) => string;
  return (
    <Dialog
      title={t('keys.title')}
      onClose={onClose}
      testId="shortcuts-dialog"
      initialFocus="button"
      readOnlyBody
    >
      {SCOPE_ORDER.map((scope) => {
        const rows = list.filter((s) => s.scope === scope);
        if (!rows.length) return null;
        return (
          <table
            key={scope}
            className="mb-3 w-full text-sm last:mb-0"
            data-testid={`shortcut-scope-${scope}`}
          >
            <caption className="pb-1 text-left text-xs font-semibold tracking-wide text-slate-500 uppercase">
              {tr(`keys.scope.${scope}`)}
            </caption>
            <tbody>
              {rows.map((s) => (
                <tr
                  key={s.labelKey}
                  className="border-b border-slate-100 last:border-0"
                  data-testid="shortcut-row"
                >
                  <td className="py-1.5 pr-4 text-slate-700">{tr(s.labelKey)}</td>
                  <td className="py-1.5 text-right whitespace-nowrap">
                    <Keys hotkey={s.keys} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        );
      })}
    </Dialog>
  );
}
