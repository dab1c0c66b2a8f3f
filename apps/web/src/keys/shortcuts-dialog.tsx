import { useTranslation } from 'react-i18next';
import { Dialog } from '../ui/dialog';
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

/** `mod+k` → [Ctrl, K]; `shift+slash` → [?]; `g>u` → [[g], [u]] (a sequence). */
export function keyCaps(hotkey: string): string[][] {
  return hotkey.split('>').map((step) => {
    const parts = step.split('+');
    if (parts.length === 2 && parts[0] === 'shift' && parts[1] === 'slash') return ['?'];
    return parts.map((p) => NAMES[p] ?? (p.length === 1 ? p.toUpperCase() : p));
  });
}

function Keys({ hotkey }: { hotkey: string }) {
  const { t } = useTranslation();
  const steps = keyCaps(hotkey);
  return (
    <span className="inline-flex items-center gap-1">
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

/** `?`: every key binding in force on the current screen, with what it does. */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const list = useShortcutsInForce();
  const tr = t as unknown as (k: string) => string;
  return (
    <Dialog title={t('keys.title')} onClose={onClose} testId="shortcuts-dialog" initialFocus="button">
      <table className="w-full text-sm">
        <caption className="sr-only">{t('keys.title')}</caption>
        <tbody>
          {list.map((s) => (
            <tr
              key={`${s.keys}|${s.labelKey}`}
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
    </Dialog>
  );
}
