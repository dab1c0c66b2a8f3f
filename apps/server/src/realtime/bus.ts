import { EventEmitter } from 'node:events';

export interface RealtimeMessage {
  topic: string;
  /** the event's id in the outbox: the websocket's clients ask for what came after it */
  id?: number;
  data: { type: string } & Record<string, unknown>;
  /** who may receive it, as the event declares (events/define.ts) */
  audience?: unknown;
}

/**
 * The one place real-time events leave the server. Typed events reach it from the outbox (events/outbox.ts),
 * after their transaction committed, on every instance; the websocket subscribes here.
 */
export class EventBus {
  private readonly emitter = new EventEmitter();
  readonly sent: RealtimeMessage[] = [];

  publish(topic: string, data: RealtimeMessage['data'], audience?: unknown, id?: number): void {
    const message: RealtimeMessage = { topic, data };
    if (audience !== undefined) message.audience = audience;
    if (id !== undefined) message.id = id;
    this.sent.push(message);
    if (this.sent.length > 1000) this.sent.shift();
    this.emitter.emit('message', message);
  }

  subscribe(listener: (m: RealtimeMessage) => void): () => void {
    this.emitter.on('message', listener);
    return () => this.emitter.off('message', listener);
  }
}
