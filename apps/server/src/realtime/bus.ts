import { EventEmitter } from 'node:events';

export interface RealtimeMessage {
  topic: string;
  data: { type: string } & Record<string, unknown>;
}

/**
 * The one place real-time events leave the server. In process today; the websocket and the fan-out across
 * instances subscribe here.
 */
export class EventBus {
  private readonly emitter = new EventEmitter();
  readonly sent: RealtimeMessage[] = [];

  publish(topic: string, data: RealtimeMessage['data']): void {
    const message = { topic, data };
    this.sent.push(message);
    if (this.sent.length > 1000) this.sent.shift();
    this.emitter.emit('message', message);
  }

  subscribe(listener: (m: RealtimeMessage) => void): () => void {
    this.emitter.on('message', listener);
    return () => this.emitter.off('message', listener);
  }
}

export const Topics = {
  appChanges: 'private-app-changes',
  user: (profileId: number) => `private-users.${profileId}`,
} as const;
