/**
 * Sounds that repeat until stopped (spec part 1 §2.3: "sounds for incoming calls and for SOS device alarms,
 * repeating until answered or ended"). Each tone is one cycle rendered into a buffer and looped by the audio
 * clock, not by timers: a background tab's timers are throttled, its audio is not. One audio context for the
 * page, unlocked by the first key or click of the session.
 */

let context: AudioContext | null = null;

function audio(): AudioContext | null {
  if (typeof AudioContext === 'undefined') return null;
  context ??= new AudioContext();
  return context;
}

/**
 * Browsers start audio only after a gesture on the page: the first key or click of the session unlocks it,
 * so a call or an alarm that comes later (the tab in the background by then) sounds.
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

/** A cycle of `seconds`: sine bursts `[from, to, hertz]`, silence between them, 10 ms ramps (no clicks). */
export interface ToneCycle {
  seconds: number;
  bursts: readonly (readonly [from: number, to: number, hertz: number])[];
}

function render(ctx: AudioContext, cycle: ToneCycle): AudioBuffer {
  const rate = ctx.sampleRate;
  const buffer = ctx.createBuffer(1, Math.round(rate * cycle.seconds), rate);
  const data = buffer.getChannelData(0);
  for (const [from, to, hertz] of cycle.bursts)
    for (let i = Math.floor(from * rate); i < to * rate; i++) {
      const t = i / rate;
      const edge = Math.min(1, (t - from) / 0.01, (to - t) / 0.01);
      data[i] = 0.25 * edge * Math.sin(2 * Math.PI * hertz * t);
    }
  return buffer;
}

/** A tone that loops from `start()` until `stop()`; starting it twice plays it once. */
export class LoopedTone {
  private source: AudioBufferSourceNode | null = null;
  private buffer: AudioBuffer | null = null;
  constructor(private readonly cycle: ToneCycle) {}

  get playing(): boolean {
    return this.source !== null;
  }

  start(): void {
    if (this.source) return;
    const ctx = audio();
    if (!ctx) return;
    if (ctx.state === 'suspended') void ctx.resume();
    this.buffer ??= render(ctx, this.cycle);
    this.source = ctx.createBufferSource();
    this.source.buffer = this.buffer;
    this.source.loop = true;
    this.source.connect(ctx.destination);
    this.source.start();
  }

  stop(): void {
    if (!this.source) return;
    try {
      this.source.stop();
    } catch {
      // already stopped
    }
    this.source.disconnect();
    this.source = null;
  }
}

/** The incoming-call ring: two 0.4 s bursts of 425 Hz, then silence to 4 s. */
export const ringTone = new LoopedTone({
  seconds: 4,
  bursts: [
    [0, 0.4, 425],
    [0.6, 1.0, 425],
  ],
});

/** The SOS alarm: a two-tone siren, 880 and 660 Hz by quarter seconds, then half a second of silence. */
export const alarmTone = new LoopedTone({
  seconds: 1.5,
  bursts: [
    [0, 0.25, 880],
    [0.25, 0.5, 660],
    [0.5, 0.75, 880],
    [0.75, 1.0, 660],
  ],
});
