import { ringTone } from '../../ui/tones';

export { unlockAudioOnGesture } from '../../ui/tones';

/**
 * The incoming-call ring (spec part 1 §2.5: "sounds for incoming calls … repeating until answered or ended"):
 * the ring tone (ui/tones.ts), looped by the audio clock so a background tab rings too. The tab's title says
 * who calls while it rings, and a desktop notification shows where the browser allows it.
 */
let notification: Notification | null = null;
let savedTitle: string | null = null;

/** Whether the ring is sounding now (the dialer button and the tests read it). */
export function isRinging(): boolean {
  return ringTone.playing;
}

export function startRing(title: string, body: string): void {
  if (ringTone.playing) return;
  ringTone.start();
  savedTitle ??= document.title;
  document.title = `☎ ${body} — ${savedTitle}`;
  if (typeof Notification !== 'undefined' && Notification.permission === 'granted' && document.hidden) {
    try {
      notification = new Notification(title, { body, tag: 'lintel-incoming-call', requireInteraction: true });
      notification.onclick = () => window.focus();
    } catch {
      // desktop notifications are skipped where the browser has none (spec part 2 §8 "Behaviour")
    }
  }
}

export function stopRing(): void {
  ringTone.stop();
  notification?.close();
  notification = null;
  if (savedTitle !== null) document.title = savedTitle;
  savedTitle = null;
}

/** Asks for desktop notifications once, on a gesture (opening the dialer). */
export function askNotifications(): void {
  if (typeof Notification !== 'undefined' && Notification.permission === 'default')
    void Notification.requestPermission().catch(() => {});
}
