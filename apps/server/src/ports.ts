import net from 'node:net';

export interface PortWanted {
  port: number;
  host: string;
  /** the setting that chooses it (PORT, MQTT_PORT), named in the message */
  name: string;
}

/** Whether something already listens on the port: a listen is tried and closed at once. */
function inUse(p: PortWanted): Promise<boolean> {
  if (p.port === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'EADDRINUSE'));
    probe.listen({ port: p.port, host: p.host, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/** The ports of `wanted` that another program holds. */
export async function busyPorts(wanted: PortWanted[]): Promise<PortWanted[]> {
  const busy: PortWanted[] = [];
  for (const p of wanted) if (await inUse(p)) busy.push(p);
  return busy;
}
