import { dismissAlert, pushAlert } from '../alerts/alerts';
import { i18next } from '../i18n';

/**
 * How long a delete waits before it is sent, with Undo in its alert (docs/decisions.md, "Undo a delete in
 * the web"). Every family gets it without a restore endpoint: nothing is sent until the time is up.
 */
export const UNDO_MS = 5000;

/**
 * Shows `message` with an Undo button for UNDO_MS. Resolves true when the person pressed Undo, false when the
 * time ran out (the caller then sends). Timers are the page's own, so a browser test moves them with
 * Playwright's clock rather than waiting.
 */
export function offerUndo(message: string): Promise<boolean> {
  return new Promise((resolve) => {
    const finish = (undone: boolean) => {
      window.clearTimeout(timer);
      dismissAlert(id);
      resolve(undone);
    };
    const id = pushAlert('info', message, {
      persistent: true,
      action: { label: i18next.t('delete.undo'), run: () => finish(true), testId: 'undo-delete' },
    });
    const timer = window.setTimeout(() => finish(false), UNDO_MS);
  });
}
