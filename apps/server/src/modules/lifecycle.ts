/**
 * The server's long-lived parts. Each starts in order and stops in reverse; an instance runs the ones its
 * configuration names (LINTEL_MODULES), so one machine may serve HTTP while another only runs jobs. The
 * device gateway (`devices`: the MQTT broker or client, the offline sweep) is one; the SIP control joins next.
 */
export interface ServerModule {
  name: string;
  start(): Promise<void>;
  /** finishes in-flight work (bounded) before it returns */
  stop(): Promise<void>;
}

export class Lifecycle {
  private readonly started: ServerModule[] = [];

  constructor(private readonly modules: readonly ServerModule[]) {}

  async start(): Promise<void> {
    for (const m of this.modules) {
      if (this.started.includes(m)) continue;
      await m.start();
      this.started.push(m);
    }
  }

  /** Stops what started, last first; a module failing to stop does not keep the others running. */
  async stop(onError: (name: string, err: unknown) => void): Promise<void> {
    while (this.started.length) {
      const m = this.started.pop()!;
      try {
        await m.stop();
      } catch (err) {
        onError(m.name, err);
      }
    }
  }
}
