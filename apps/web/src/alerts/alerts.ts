import { atom } from 'jotai';
import { appStore } from '../store';

/** Spec part 2 §8: alerts come as error, warning, success or info. */
export type AlertKind = 'error' | 'warning' | 'success' | 'info';

export interface Alert {
  id: number;
  kind: AlertKind;
  message: string;
  /** stays until dismissed (e.g. the licence warning); others leave after ALERT_TIMEOUT_MS */
  persistent: boolean;
  /** a button beside the message (the Undo of a delete that waits) */
  action?: { label: string; run: () => void; testId?: string };
}

export const alertsAtom = atom<Alert[]>([]);

let nextId = 1;

export function pushAlert(
  kind: AlertKind,
  message: string,
  options: { persistent?: boolean; action?: Alert['action'] } = {},
): number {
  const id = nextId++;
  appStore.set(alertsAtom, (list) => [
    // the same message twice in a row is shown once
    ...list.filter((a) => !(a.kind === kind && a.message === message)),
    { id, kind, message, persistent: options.persistent ?? false, action: options.action },
  ]);
  return id;
}

export function dismissAlert(id: number): void {
  appStore.set(alertsAtom, (list) => list.filter((a) => a.id !== id));
}

/** Opening the login page clears alerts (spec part 1 §2.2). */
export function clearAlerts(): void {
  appStore.set(alertsAtom, []);
}
