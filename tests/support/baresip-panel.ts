/**
 * A door panel that is not ours: Debian's baresip (ICE, DTLS-SRTP, a 440 Hz sine as its microphone, its
 * control socket `ctrl_tcp` reporting what happens to its calls), for the dialer's e2e files. baresip needs an
 * address that is not loopback and one candidate address (../shared/SIP.md), so it runs in a network
 * namespace of its own joined to this machine by a veth pair (root only, as the other real parts' installs);
 * Kamailio and Lintel listen on the host's end of it (`hostIp`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { uid } from './fixtures';
import { WAIT } from './web';

const CTRL_PORT = 4444;
const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

export class BaresipPanel {
  readonly ns: string;
  /** this machine's end of the veth pair: where Kamailio and Lintel listen for the panel */
  readonly hostIp: string;
  readonly panelIp: string;
  /** the control socket's events (netstrings of JSON), in order */
  readonly events: { type?: string; param?: string }[] = [];
  /** the end of baresip's output, for a failure's message (without its call status line, see `keep`) */
  log = '';
  /** the output's last line while it is not ended yet */
  private partial = '';
  private readonly hostIf: string;
  private readonly nsIf: string;
  private proc: ChildProcess | null = null;
  private dir = '';
  private control: net.Socket | null = null;

  /** `name`: a short word naming the file's namespace; `net`: the second byte of its 10.x.y.0/30 */
  constructor(name: string, net: number) {
    const tag = uid().slice(0, 6);
    this.ns = `lintel-${name}-${tag}`;
    this.hostIf = `l${name[0]}h${tag}`;
    this.nsIf = `l${name[0]}n${tag}`;
    const octet = 16 + Math.floor(Math.random() * 200);
    this.hostIp = `10.${net}.${octet}.1`;
    this.panelIp = `10.${net}.${octet}.2`;
  }

  /** The panel's network: the namespace and the veth pair. */
  up(): void {
    ip('netns', 'add', this.ns);
    ip('link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', this.nsIf);
    ip('link', 'set', this.nsIf, 'netns', this.ns);
    ip('addr', 'add', `${this.hostIp}/30`, 'dev', this.hostIf);
    ip('link', 'set', this.hostIf, 'up');
    ip('netns', 'exec', this.ns, 'ip', 'addr', 'add', `${this.panelIp}/30`, 'dev', this.nsIf);
    ip('netns', 'exec', this.ns, 'ip', 'link', 'set', this.nsIf, 'up');
    ip('netns', 'exec', this.ns, 'ip', 'link', 'set', 'lo', 'up');
  }

  /**
   * baresip as the panel `number`, registered to Kamailio on `sipPort`: `answer` answers every call by itself
   * (a panel the concierge calls); otherwise its calls are placed by `command('dial', …)`. `video`: a camera
   * (baresip's fakevideo source, a moving test picture) sent as VP8, offered in its calls.
   */
  start(number: string, password: string, sipPort: number, opts: { answer: boolean; video?: boolean }): void {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-baresip-'));
    fs.writeFileSync(
      path.join(this.dir, 'config'),
      [
        'poll_method epoll',
        `sip_listen ${this.panelIp}:5060`,
        'audio_player aubridge,nil',
        'audio_source ausine,440',
        // the sine source is 48 kHz stereo only; baresip resamples it for G.711
        'ausrc_srate 48000',
        'ausrc_channels 2',
        'auplay_srate 48000',
        'audio_alert aubridge,nil',
        'rtcp_mux yes',
        'module_path /usr/lib/baresip/modules',
        'module g711.so',
        'module ausine.so',
        'module aubridge.so',
        'module ice.so',
        'module dtls_srtp.so',
        ...(opts.video
          ? [
              'module vp8.so',
              'module fakevideo.so',
              'video_source fakevideo,nil',
              'video_display fakevideo,nil',
              'video_size 320x240',
              'video_fps 15',
              'video_bitrate 300000',
            ]
          : []),
        'module_app account.so',
        // `dial` on the control socket
        ...(opts.answer ? [] : ['module_app menu.so']),
        'module_app ctrl_tcp.so',
        `ctrl_tcp_listen 0.0.0.0:${CTRL_PORT}`,
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(this.dir, 'accounts'),
      `<sip:${number}@${this.hostIp}:${sipPort};transport=udp>;auth_pass=${password};` +
        `${opts.answer ? 'answermode=auto;' : ''}medianat=ice;mediaenc=dtls_srtp;audio_codecs=PCMU;` +
        `${opts.video ? 'video_codecs=VP8;' : ''}regint=60\n`,
    );
    this.proc = spawn('ip', ['netns', 'exec', this.ns, 'baresip', '-f', this.dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => this.keep(d.toString());
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
  }

  /** Opens the control socket (tried until baresip listens): its events are kept in `events`. */
  async listen(): Promise<void> {
    const end = Date.now() + WAIT;
    for (;;) {
      const socket = await new Promise<net.Socket | null>((resolve) => {
        const s = net.connect(CTRL_PORT, this.panelIp);
        let buffer = '';
        s.once('connect', () => resolve(s));
        s.once('error', () => resolve(null));
        s.on('data', (d) => {
          buffer += d.toString();
          for (;;) {
            const colon = buffer.indexOf(':');
            if (colon < 0) break;
            const len = Number(buffer.slice(0, colon));
            if (buffer.length < colon + 1 + len + 1) break;
            try {
              this.events.push(JSON.parse(buffer.slice(colon + 1, colon + 1 + len)) as { type?: string });
            } catch {
              // not an event
            }
            buffer = buffer.slice(colon + 1 + len + 1);
          }
        });
      });
      if (socket) {
        this.control = socket;
        return;
      }
      if (Date.now() > end) throw new Error(`the panel's control socket did not open\n${this.log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * baresip's output, kept to its last 6,000 characters, without the status line it redraws with a carriage
   * return several times a second during a call (`[0:00:52] audio=… video=… efps=…`): a minute of those filled
   * a failure's message and pushed what went wrong out of CI's tail.
   */
  private keep(text: string): void {
    const lines = (this.partial + text).split(/\r\n|\r|\n/);
    this.partial = lines.pop() ?? '';
    const kept = lines.filter((l) => l.trim() && !/^\s*\[\d+:\d\d:\d\d\] audio=/.test(l));
    if (kept.length) this.log = `${this.log}${kept.join('\n')}\n`.slice(-6000);
  }

  /**
   * baresip stops (its control socket with it), and is gone when this resolves: a start right after a kill
   * could meet the process it replaces still holding its SIP port and its control socket. `start` may run it
   * again, otherwise configured.
   */
  async stop(): Promise<void> {
    this.control?.destroy();
    this.control = null;
    const proc = this.proc;
    this.proc = null;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGKILL');
      await exited;
    }
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = '';
  }

  /** A command to the panel (ctrl_tcp: a netstring of JSON). */
  command(name: string, params: string): void {
    const json = JSON.stringify({ command: name, params, token: uid() });
    this.control!.write(`${Buffer.byteLength(json)}:${json},`);
  }

  /**
   * A browser init script: the concierge's machine has one network toward the panel, so its SDP names only
   * that address (baresip's ICE wants a single candidate address, ../shared/SIP.md; this machine has others
   * the panel cannot reach), each media section on the port of its own candidate (audio and video, not
   * bundled with baresip); every peer connection is kept in `window.__pcs`.
   */
  oneAddressScript(): string {
    const hostIp = this.hostIp;
    return `
      window.__pcs = [];
      const Native = window.RTCPeerConnection;
      const local = Object.getOwnPropertyDescriptor(Native.prototype, 'localDescription').get;
      window.RTCPeerConnection = class extends Native {
        constructor(...args) { super(...args); window.__pcs.push(this); }
        get localDescription() {
          const d = local.call(this);
          if (!d) return d;
          let any = false;
          const sections = d.sdp.split('\\r\\nm=').map((section, i) => {
            const lines = section.split('\\r\\n').filter((l) => !l.startsWith('a=candidate') || (l.includes(' ${hostIp} ') && l.includes(' udp ')));
            const kept = lines.find((l) => l.startsWith('a=candidate'));
            if (kept) any = true;
            return lines
              .map((l, n) => (l.startsWith('c=IN IP4 ') ? 'c=IN IP4 ${hostIp}' : i > 0 && n === 0 && kept ? l.replace(/^(\\w+) \\d+/, '$1 ' + kept.split(' ')[5]) : l))
              .join('\\r\\n');
          });
          if (!any) return d;
          return new RTCSessionDescription({ type: d.type, sdp: sections.join('\\r\\nm=') });
        }
      };`;
  }

  /** The control socket, baresip, the namespace (with its veth pair) and the configuration folder go. */
  async down(): Promise<void> {
    await this.stop();
    try {
      ip('netns', 'del', this.ns);
    } catch {
      // never made, or gone
    }
  }
}
