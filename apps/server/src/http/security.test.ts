import { describe, expect, it } from 'vitest';
import { parseIceServers } from '../sip/config';
import { sipWebsocketSource } from './security';

describe("the console's CSP names the dialer's SIP websocket", () => {
  const source = sipWebsocketSource({ wsPort: 8443, secure: true });

  it('on the host the page was asked by, at the SIP websocket port', () => {
    expect(source({ headers: { host: 'console.example.org' } })).toBe('wss://console.example.org:8443');
    expect(source({ headers: { host: '10.0.0.5:3000' } })).toBe('wss://10.0.0.5:8443');
    expect(source({ headers: { host: '[::1]:3000' } })).toBe('wss://[::1]:8443');
    expect(sipWebsocketSource({ wsPort: 5066, secure: false })({ headers: { host: '127.0.0.1:1' } })).toBe(
      'ws://127.0.0.1:5066',
    );
  });

  it('adds nothing for a Host header that is not a plain name or address, or without telephony', () => {
    for (const host of ['evil.org; script-src *', "a.org 'unsafe-inline'", 'a.org,b.org', '', undefined])
      expect(source({ headers: { host } })).toBe("'self'");
    expect(sipWebsocketSource(null)({ headers: { host: 'console.example.org' } })).toBe("'self'");
  });
});

describe('LINTEL_SIP_ICE_SERVERS', () => {
  it('is none by default, URLs, or a JSON array of RTCIceServer; bad JSON is refused', () => {
    expect(parseIceServers(undefined)).toEqual([]);
    expect(parseIceServers(' ')).toEqual([]);
    expect(parseIceServers('stun:stun.example.org:3478, turn:turn.example.org')).toEqual([
      { urls: 'stun:stun.example.org:3478' },
      { urls: 'turn:turn.example.org' },
    ]);
    expect(
      parseIceServers('[{"urls":["turn:t.example.org"],"username":"u","credential":"c","extra":1}]'),
    ).toEqual([{ urls: ['turn:t.example.org'], username: 'u', credential: 'c' }]);
    expect(() => parseIceServers('[{"username":"u"}]')).toThrow(/urls/);
    expect(() => parseIceServers('[oops')).toThrow();
  });
});
