/**
 * The incoming-call ring (spec part 1 §2.5: "sounds for incoming calls … repeating until answered or ended").
 * One cycle (two 0.4 s bursts of 425 Hz, then silence to 4 s) is rendered into a buffer and looped by the
 * audio clock, not by timers: a background tab's timers are throttled, its audio is not. The tab's title
 * says who calls while it rings, and a desktop notification shows where the browser allows it.
 */
const CYCLE_S = 4;
const FREQUENCY = 425;

let context: AudioContext | null = null;
let source: AudioBufferSourceNode | null = null;
let notification: Notification | null = null;
let savedTitle: string | null = null;

function audio(): AudioContext | null {
  if (typeof AudioContext === 'undefined') return null;
  context ??= new AudioContext();
  return context;
}

/**
 * Browsers start audio only after a gesture on the page: the first key or click of the session unlocks it,
 * so a call that comes later (the tab in the background by then) rings.
 */
export function unlockAudioOnGesture(): () => void {
  const unlock = () => {
    const ctx = audio();
    if (ctx && ctx.state === 'suspended') void ctx.resume();
  };
  document.addEventListener('pointerdown', unlock, true);
  document.addEventListener('keydown', unlock, true);
  return () => {
    document.removeEventListener('pointerdown', unlock, true);
    document.removeEventListener('keydown', unlock, true);
  };
}

function ringBuffer(ctx: AudioContext): AudioBuffer {
  const rate = ctx.sampleRate;
  const buffer = ctx.createBuffer(1, rate * CYCLE_S, rate);
  const data = buffer.getChannelData(0);
  const bursts: [number, number][] = [
    [0, 0.4],
    [0.6, 1.0],
  ];
  for (const [from, to] of bursts)
    for (let i = Math.floor(from * rate); i < to * rate; i++) {
      const t = i / rate;
      // 10 ms ramps: no clicks
      const edge = Math.min(1, (t - from) / 0.01, (to - t) / 0.01);
      data[i] = 0.25 * edge * Math.sin(2 * Math.PI * FREQUENCY * t);
    }
  return buffer;
}

/** Whether the ring is sounding now (the dialer button and the tests read it). */
export function isRinging(): boolean {
  return source !== null;
}

export function startRing(title: string, body: string): void {
  if (source) return;
  const ctx = audio();
  if (ctx) {
    if (ctx.state === 'suspended') void ctx.resume();
    source = ctx.createBufferSource();
    source.buffer = ringBuffer(ctx);
    source.loop = true;
    source.connect(ctx.destination);
    source.start();
  }
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
  if (source) {
    try {
      source.stop();
    } catch {
      // already stopped
    }
    source.disconnect();
    source = null;
  }
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
