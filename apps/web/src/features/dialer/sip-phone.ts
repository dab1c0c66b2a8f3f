/**
 * The web dialer's sip.js layer (issue 23 item 1). It owns no rules of its own: the core's registration
 * machine (`reduceRegistration`) and calls reducer (`reduceCalls`) decide, and this class carries out their
 * effects with sip.js — REGISTER over the SIP websocket with the user's number and HA1, INVITEs, answers,
 * holds (re-INVITE), tones (SIP INFO `application/dtmf-relay`), mutes — and turns what sip.js reports back
 * into their events. The console reads `snapshot()` through `subscribe` (React's useSyncExternalStore).
 *
 * Early media (issue 23 item 7; docs/decisions.md "Issue 23: video from the door panel before answering"): a
 * ringing call offering video is answered with a 183 Session Progress whose SDP answer sip.js makes with no local
 * media — nothing captured, nothing sent —, so the panel's video shows on the ringing card; accepting sends the
 * 200 OK (the same answer, as RFC 3261 §13.2.1 wants after an unreliable 1xx) and then puts the microphone (and
 * the camera, where the answer offered to send video) on the senders the answer already opened: no re-INVITE.
 */
import {
  Invitation,
  Inviter,
  Messager,
  Registerer,
  RegistererState,
  SessionState,
  UserAgent,
  Web,
  type Session,
} from 'sip.js';
import {
  Dialer,
  DTMF_RELAY_CONTENT_TYPE,
  dtmfRelayBody,
  initialCalls,
  initialRegistration,
  isSosFlag,
  JoinMessage,
  reduceCalls,
  reduceRegistration,
  SpeechHeaders,
  type CallEffect,
  type CallEvent,
  type CallsState,
  type ErrorKey,
  type Registration,
  type RegistrationEffect,
  type RegistrationEvent,
} from '@lintel/core';

export interface PhoneProfile {
  number: string;
  name: string;
  ha1: string;
  /** ws(s)://host:port of the SIP websocket */
  server: string;
  /** the host part of SIP addresses (the console's host) */
  domain: string;
  iceServers: RTCIceServer[];
}

export interface PhoneHooks {
  ring(): void;
  stopRing(): void;
  /** a refusal of the calls reducer (`own_number_call`, `call_number_required`, …) or a failed action */
  refused(code: ErrorKey): void;
  /** an awaiting call stopped through the server (the telephony's call management) */
  stopOnServer(speechId: string): Promise<void>;
}

export interface PhoneSnapshot {
  registration: Registration;
  calls: CallsState;
}

type Listener = () => void;

/**
 * How long a join accepted by the SIP server (202) waits for the held INVITE it sends; it comes at once (the
 * SIP server appends the branch before answering), so this bounds only a phone that never gets it.
 */
const JOIN_INVITE_TIMEOUT_MS = 10_000;
/** The SIP status a join ends with when the held INVITE never came (said as "can't perform action"). */
const JOIN_TIMED_OUT = 408;

const header = (invitation: Invitation, name: string): string | undefined =>
  invitation.request.getHeader(name) ?? undefined;

export class SipPhone {
  /** this tab holds the registration (tab-phone.ts) */
  readonly mirrored = false;
  private readonly ua: UserAgent;
  private readonly registerer: Registerer;
  private readonly sessions = new Map<string, Session>();
  private readonly audio = new Map<string, HTMLAudioElement>();
  /** the 183s being made (early media): an answer waits for its call's one */
  private readonly early = new Map<string, Promise<void>>();
  /** the awaiting calls this phone asked to join: their held INVITE is answered by itself when it comes */
  private readonly joins = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly listeners = new Set<Listener>();
  private state: PhoneSnapshot;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private pruneTimer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  private closed = false;

  constructor(
    private readonly profile: PhoneProfile,
    private readonly hooks: PhoneHooks,
  ) {
    this.state = { registration: initialRegistration, calls: initialCalls(profile.number) };
    this.ua = new UserAgent({
      uri: UserAgent.makeURI(`sip:${profile.number}@${profile.domain}`),
      displayName: profile.name,
      authorizationUsername: profile.number,
      authorizationHa1: profile.ha1,
      transportOptions: { server: profile.server, connectionTimeout: 10 },
      // the registration machine retries (5 s / 30 s), not sip.js
      reconnectionAttempts: 0,
      ...sipLog(),
      sessionDescriptionHandlerFactoryOptions: {
        // the settings' ICE servers only: none by default (no public STUN unless configured)
        peerConnectionConfiguration: { iceServers: profile.iceServers },
        iceGatheringTimeout: Dialer.iceCheckingTimeoutMs,
      },
      delegate: {
        onInvite: (invitation) => this.incoming(invitation),
        onDisconnect: (error) => {
          if (error && !this.closed) this.registrationEvent({ type: 'transport_error' });
        },
      },
    });
    this.registerer = new Registerer(this.ua, { expires: 300 });
    this.registerer.stateChange.addListener((s) => {
      if (s === RegistererState.Registered) this.registrationEvent({ type: 'registered' });
      // a refused REGISTER also ends in Unregistered: only an asked-for unregistration is one
      if (s === RegistererState.Unregistered && this.state.registration.state === 'unregistering')
        this.registrationEvent({ type: 'unregistered' });
    });
  }

  // ----- what the console reads -------------------------------------------------------------------------

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): PhoneSnapshot => this.state;

  /** The far end's media of a call (audio, and video when it sends some), once established. */
  remoteStream(speechId: string): MediaStream | null {
    const sdh = this.sessions.get(speechId)?.sessionDescriptionHandler;
    return sdh instanceof Web.SessionDescriptionHandler ? sdh.remoteMediaStream : null;
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }

  // ----- registration ------------------------------------------------------------------------------------

  register(): void {
    this.registrationEvent({ type: 'register' });
  }

  unregister(): void {
    this.registrationEvent({ type: 'unregister' });
  }

  private registrationEvent(event: RegistrationEvent): void {
    if (this.closed) return;
    const { state, effects } = reduceRegistration(this.state.registration, event);
    this.state = { ...this.state, registration: state };
    this.emit();
    for (const e of effects) this.registrationEffect(e);
  }

  private registrationEffect(effect: RegistrationEffect): void {
    switch (effect.type) {
      case 'send_register':
        void this.sendRegister();
        return;
      case 'send_unregister':
        this.registerer.unregister().catch(() => this.registrationEvent({ type: 'unregistered' }));
        return;
      case 'schedule_retry':
        if (this.retryTimer) clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.registrationEvent({ type: 'retry' });
        }, effect.delayMs);
        return;
      case 'cancel_retry':
        if (this.retryTimer) clearTimeout(this.retryTimer);
        this.retryTimer = null;
        return;
    }
  }

  private async sendRegister(): Promise<void> {
    try {
      if (!this.started) {
        this.started = true;
        await this.ua.start();
      } else if (!this.ua.isConnected()) {
        await this.ua.reconnect();
      }
    } catch {
      if (!this.closed) this.registrationEvent({ type: 'transport_error' });
      return;
    }
    try {
      await this.registerer.register({
        requestDelegate: {
          // sip.js keeps a registerer Registered across a lost websocket, so a REGISTER accepted again
          // changes no state: the accept itself says so
          onAccept: () => this.registrationEvent({ type: 'registered' }),
          onReject: (response) => {
            const code = response.message.statusCode ?? 0;
            // a final 4xx: the credentials (or the number) are refused; anything else is the way there
            this.registrationEvent({ type: code >= 400 && code < 500 ? 'rejected' : 'transport_error' });
          },
        },
      });
    } catch {
      this.registrationEvent({ type: 'transport_error' });
    }
  }

  /** Unregisters, ends every call and closes the websocket (sign-out, the dialer leaving the console). */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const [, session] of this.sessions) endSession(session, 'terminate');
    if (this.state.registration.state === 'registered') await this.registerer.unregister().catch(() => {});
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pruneTimer) clearTimeout(this.pruneTimer);
    for (const timer of this.joins.values()) clearTimeout(timer);
    this.joins.clear();
    this.hooks.stopRing();
    for (const el of this.audio.values()) el.srcObject = null;
    this.audio.clear();
    await this.ua.stop().catch(() => {});
  }

  // ----- calls -------------------------------------------------------------------------------------------

  /** Every call action of the console goes through here, into the core's calls reducer. */
  call(event: CallEvent): void {
    if (this.closed) return;
    const { state, effects } = reduceCalls(this.state.calls, event, Date.now());
    this.state = { ...this.state, calls: state };
    this.schedulePrune();
    this.emit();
    for (const e of effects) void this.callEffect(e);
  }

  private schedulePrune(): void {
    const destroyed = this.state.calls.calls.map((c) => c.destroyedAt).filter((t): t is number => t !== null);
    if (this.pruneTimer) clearTimeout(this.pruneTimer);
    this.pruneTimer = null;
    if (!destroyed.length) return;
    const due = Math.min(...destroyed) + Dialer.destroyedCallKeptMs - Date.now();
    this.pruneTimer = setTimeout(() => this.call({ type: 'prune' }), Math.max(0, due) + 10);
  }

  private async callEffect(effect: CallEffect): Promise<void> {
    const session = 'speechId' in effect ? this.sessions.get(effect.speechId) : undefined;
    switch (effect.type) {
      case 'invite':
        return this.invite(effect.speechId, effect.number, effect.video);
      case 'join':
        // a call the platform holds: asked for by a MESSAGE; its held INVITE then comes to this phone
        return this.join(effect.speechId);
      case 'progress':
        if (session instanceof Invitation) {
          const made = this.earlyMedia(effect.speechId, session);
          this.early.set(effect.speechId, made);
          await made;
          if (this.early.get(effect.speechId) === made) this.early.delete(effect.speechId);
        }
        return;
      case 'answer': {
        if (!(session instanceof Invitation)) return;
        await this.early.get(effect.speechId);
        const call = this.state.calls.calls.find((c) => c.speechId === effect.speechId);
        if (call?.earlyMedia === 'flowing' && session.dialog)
          return this.answerEarly(effect.speechId, session);
        try {
          await session.accept({
            sessionDescriptionHandlerOptions: { constraints: { audio: true, video: !!call?.video } },
          });
        } catch {
          this.hooks.refused('no_media_devices');
          this.call({ type: 'session_ended', speechId: effect.speechId });
        }
        return;
      }
      case 'end':
        // a join given up before its INVITE came: that INVITE is refused when it comes
        this.forgetJoin(effect.speechId);
        if (session) endSession(session, effect.how);
        return;
      case 'stop_on_server':
        // refused or failed: the call is destroyed and removed all the same (spec part 2 §8 "Behaviour")
        await this.hooks.stopOnServer(effect.speechId).catch(() => {});
        return;
      case 'hold':
      case 'unhold':
        if (session) await this.setHold(effect.speechId, session, effect.type === 'hold');
        return;
      case 'send_dtmf':
        if (!session) return;
        for (const tone of effect.tones) {
          await session
            .info({
              requestOptions: {
                body: {
                  contentDisposition: 'render',
                  contentType: DTMF_RELAY_CONTENT_TYPE,
                  content: dtmfRelayBody(tone),
                },
              },
            })
            .catch(() => this.hooks.refused('cant_perform_action'));
          await new Promise((r) => setTimeout(r, tone.durationMs + tone.gapMs));
        }
        return;
      case 'mute':
        if (effect.what === 'mic') this.enableSenders(session, !effect.muted);
        else {
          const el = this.audio.get(effect.speechId);
          if (el) el.muted = effect.muted;
        }
        return;
      case 'ring':
        return this.hooks.ring();
      case 'stop_ring':
        return this.hooks.stopRing();
      case 'refuse':
      case 'join_refused':
        return this.hooks.refused(effect.code);
      case 'ask':
        // the console shows `calls.pending` and answers with a `confirm` event
        return;
    }
  }

  /**
   * The 183 with an SDP answer for a ringing video call (`Invitation.progress` with status 183 and no body: sip.js
   * makes the answer). No local media: the answer's audio is sendrecv with no track yet (nothing is sent, the
   * visitor hears nothing), its video sendrecv where this machine has a camera (sent once answered), else
   * recvonly. Unreliable (no 100rel) unless the caller requires it: then sip.js waits for its PRACK.
   */
  private async earlyMedia(speechId: string, invitation: Invitation): Promise<void> {
    try {
      const camera = await hasCamera();
      if (invitation.state !== SessionState.Initial) return;
      await invitation.progress({
        statusCode: 183,
        sessionDescriptionHandlerOptions: { constraints: { audio: false, video: false } },
        sessionDescriptionHandlerModifiers: camera ? [] : [receiveVideoOnly(invitation)],
      });
    } catch {
      // sip.js rethrows what it could not answer after rejecting the INVITE (480): the session's end says so
    }
    // a failed 183 ends the INVITE: the session's end says so; else the preview is on
    const ok = invitation.state === SessionState.Initial && !!invitation.dialog;
    this.call({ type: 'early_media', speechId, ok });
  }

  /**
   * Accepts a call whose early media flows: the microphone (and the camera when the answer sends video) first —
   * without a microphone there is no 200 OK, as without early media —, then the 200 OK with the 183's answer,
   * then the tracks on the senders that answer opened (replaceTrack: no renegotiation).
   */
  private async answerEarly(speechId: string, invitation: Invitation): Promise<void> {
    const sdh = invitation.sessionDescriptionHandler;
    const pc = sdh instanceof Web.SessionDescriptionHandler ? sdh.peerConnection : undefined;
    const transceiver = (kind: string) =>
      pc?.getTransceivers().find((t) => t.receiver.track.kind === kind && t.currentDirection !== 'stopped');
    const sendsVideo = ['sendrecv', 'sendonly'].includes(transceiver('video')?.currentDirection ?? '');
    let local: MediaStream;
    try {
      local = await userMedia(sendsVideo);
    } catch {
      this.hooks.refused('no_media_devices');
      endSession(invitation, 'reject');
      return;
    }
    const drop = () => local.getTracks().forEach((t) => t.stop());
    if (invitation.state !== SessionState.Initial) return drop();
    try {
      await invitation.accept();
    } catch {
      drop();
      return;
    }
    if (
      (invitation.state as SessionState) !== SessionState.Established ||
      !(sdh instanceof Web.SessionDescriptionHandler)
    )
      return drop();
    for (const track of local.getTracks()) {
      const sender = transceiver(track.kind)?.sender;
      if (!sender) {
        track.stop();
        continue;
      }
      await sender.replaceTrack(track).catch(() => track.stop());
      // the handler's stream: its tracks are stopped with the session
      sdh.localMediaStream.addTrack(track);
    }
    const call = this.state.calls.calls.find((c) => c.speechId === speechId);
    this.enableSenders(invitation, !call?.settings.micMuted);
  }

  private async invite(speechId: string, number: string, video: boolean): Promise<void> {
    const target = UserAgent.makeURI(`sip:${number}@${this.profile.domain}`);
    if (!target) {
      this.hooks.refused('call_number_required');
      this.call({ type: 'session_ended', speechId });
      return;
    }
    const inviter = new Inviter(this.ua, target, {
      extraHeaders: [`${SpeechHeaders.speechId}: ${speechId}`],
      sessionDescriptionHandlerOptions: { constraints: { audio: true, video } },
    });
    this.track(speechId, inviter);
    try {
      await inviter.invite();
    } catch {
      // a call the user ended while the browser was still getting the microphone is no media failure
      const call = this.state.calls.calls.find((c) => c.speechId === speechId);
      if (call && call.status !== 'destroyed') this.hooks.refused('no_media_devices');
      this.call({ type: 'session_ended', speechId });
    }
  }

  /**
   * Joins an awaiting call: a SIP MESSAGE naming its speech id (`JoinMessage`, the SIP server's `route[JOIN]`);
   * on 202 the SIP server sends the call's held INVITE, with the same speech id, to this phone, and `incoming`
   * answers it. A refusal (403, 404, …) or no INVITE in time: `join_failed`.
   */
  private async join(speechId: string): Promise<void> {
    this.forgetJoin(speechId);
    this.joins.set(
      speechId,
      setTimeout(() => {
        if (this.joins.delete(speechId)) this.call({ type: 'join_failed', speechId, status: JOIN_TIMED_OUT });
      }, JOIN_INVITE_TIMEOUT_MS),
    );
    const failed = (status: number) => {
      if (!this.forgetJoin(speechId)) return;
      this.call({ type: 'join_failed', speechId, status });
    };
    const target = UserAgent.makeURI(`sip:${JoinMessage.user}@${this.profile.domain}`);
    if (!target) return failed(0);
    const messager = new Messager(this.ua, target, JoinMessage.body, JoinMessage.contentType, {
      extraHeaders: [`${SpeechHeaders.speechId}: ${speechId}`],
    });
    try {
      await messager.message({
        requestDelegate: { onReject: (response) => failed(response.message.statusCode ?? 0) },
      });
    } catch {
      failed(0);
    }
  }

  /** Stops waiting for a join's INVITE; whether one was awaited. */
  private forgetJoin(speechId: string): boolean {
    const timer = this.joins.get(speechId);
    if (timer === undefined) return false;
    clearTimeout(timer);
    this.joins.delete(speechId);
    return true;
  }

  private incoming(invitation: Invitation): void {
    const speechId = header(invitation, SpeechHeaders.speechId) ?? invitation.request.callId;
    const number = invitation.remoteIdentity.uri.user ?? '';
    const video = /\r?\nm=video /.test(`\n${invitation.body ?? ''}`);
    if (this.forgetJoin(speechId)) {
      // the held INVITE of a call this phone asked to join: ours already, answered without ringing
      this.track(speechId, invitation);
      invitation
        .accept({ sessionDescriptionHandlerOptions: { constraints: { audio: true, video } } })
        .catch(() => {
          this.hooks.refused('no_media_devices');
          this.call({ type: 'session_ended', speechId });
        });
      return;
    }
    this.track(speechId, invitation);
    this.call({
      type: 'incoming',
      speechId,
      number,
      callee: header(invitation, SpeechHeaders.targetCallee) ?? this.profile.number,
      sos: isSosFlag(header(invitation, SpeechHeaders.sos)),
      callType: header(invitation, SpeechHeaders.speechType) === 'awaiting' ? 'awaiting' : 'normal',
      video,
    });
    // the reducer did not take it (a speech id it already ended): not ours to ring
    const taken = this.state.calls.calls.find((c) => c.speechId === speechId && c.hasSipSession);
    if (!taken) {
      this.sessions.delete(speechId);
      invitation.reject({ statusCode: 486 }).catch(() => {});
    }
  }

  private track(speechId: string, session: Session): void {
    this.sessions.set(speechId, session);
    session.stateChange.addListener((s) => {
      if (this.sessions.get(speechId) !== session) return;
      if (s === SessionState.Established) {
        this.attachMedia(speechId, session);
        this.call({ type: 'session_accepted', speechId });
      }
      if (s === SessionState.Terminated) {
        this.sessions.delete(speechId);
        const el = this.audio.get(speechId);
        if (el) el.srcObject = null;
        this.audio.delete(speechId);
        this.call({ type: 'session_ended', speechId });
      }
    });
  }

  private attachMedia(speechId: string, session: Session): void {
    const stream = this.remoteStream(speechId);
    if (!stream) return;
    let el = this.audio.get(speechId);
    if (!el) {
      el = new Audio();
      el.autoplay = true;
      this.audio.set(speechId, el);
    }
    el.srcObject = stream;
    const call = this.state.calls.calls.find((c) => c.speechId === speechId);
    el.muted = !!call?.settings.volumeMuted;
    this.enableSenders(session, !call?.settings.micMuted);
    el.play().catch(() => {});
  }

  private enableSenders(session: Session | undefined, enabled: boolean): void {
    const sdh = session?.sessionDescriptionHandler;
    if (!(sdh instanceof Web.SessionDescriptionHandler)) return;
    for (const sender of sdh.peerConnection?.getSenders() ?? [])
      if (sender.track) sender.track.enabled = enabled;
  }

  /** each session's last re-INVITE, settled once answered (or given up): the next waits for it */
  private readonly reinvites = new WeakMap<Session, Promise<void>>();

  /**
   * Hold or resume with a re-INVITE (sendonly / sendrecv), as sip.js's SessionManager does it; one at a time.
   * sip.js refuses a re-INVITE while its last one is unanswered ("Reinvite in progress"), and its `invite()`
   * settles when the request is sent, not answered: a resume pressed right after a hold, before the hold's
   * 200 OK was taken, was refused and the call stayed held (seen in CI, the dialer's hold and resume).
   */
  private setHold(speechId: string, session: Session, hold: boolean): Promise<void> {
    const next = (this.reinvites.get(session) ?? Promise.resolve()).then(() =>
      this.reinvite(speechId, session, hold),
    );
    this.reinvites.set(session, next);
    return next;
  }

  /** One re-INVITE, settled when it is answered, refused, or its session ends. */
  private reinvite(speechId: string, session: Session, hold: boolean): Promise<void> {
    if (session.state !== SessionState.Established) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const ended = (s: SessionState) => {
        if (s === SessionState.Terminated) done();
      };
      // an INVITE transaction times out after 32 s (timer B) without a word to the delegate
      const timer = setTimeout(() => done(), 40_000);
      const done = () => {
        clearTimeout(timer);
        session.stateChange.removeListener(ended);
        resolve();
      };
      session.stateChange.addListener(ended);
      const options =
        session.sessionDescriptionHandlerOptionsReInvite as Web.SessionDescriptionHandlerOptions;
      options.hold = hold;
      session.sessionDescriptionHandlerOptionsReInvite = options;
      session
        .invite({
          requestDelegate: {
            onAccept: () => {
              const sdh = session.sessionDescriptionHandler;
              if (sdh instanceof Web.SessionDescriptionHandler)
                for (const r of sdh.peerConnection?.getReceivers() ?? []) r.track.enabled = !hold;
              const call = this.state.calls.calls.find((c) => c.speechId === speechId);
              this.enableSenders(session, !hold && !call?.settings.micMuted);
              if (!hold) this.call({ type: 'session_accepted', speechId });
              done();
            },
            onReject: () => {
              this.hooks.refused('cant_perform_action');
              done();
            },
          },
        })
        .catch(() => {
          this.hooks.refused('cant_perform_action');
          done();
        });
    });
  }
}

/**
 * sip.js's own log: none, unless this browser asks for it (`localStorage['lintel:sip-log']` set to `debug`, `log`,
 * `warn` or `error`) — for support, and for the browser tests' report of a failed call. Never the passwords: the
 * phone holds an HA1 only.
 */
function sipLog(): { logBuiltinEnabled: boolean; logLevel: 'debug' | 'log' | 'warn' | 'error' } {
  let asked: string | null = null;
  try {
    asked = window.localStorage.getItem(Dialer.sipLogKey);
  } catch {
    // storage refused (a sandboxed frame): no log
  }
  return asked === 'debug' || asked === 'log' || asked === 'warn' || asked === 'error'
    ? { logBuiltinEnabled: true, logLevel: asked }
    : { logBuiltinEnabled: false, logLevel: 'error' };
}

/** Whether this machine has a camera (listed without asking for it: no permission prompt). */
async function hasCamera(): Promise<boolean> {
  try {
    const devices = (await navigator.mediaDevices?.enumerateDevices()) ?? [];
    return devices.some((d) => d.kind === 'videoinput');
  } catch {
    return false;
  }
}

/** The microphone, and the camera when `video` and there is one (a call goes on without it). */
async function userMedia(video: boolean): Promise<MediaStream> {
  if (video) {
    try {
      return await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
    } catch {
      // no camera, or a blocked one: the microphone alone
    }
  }
  return navigator.mediaDevices.getUserMedia({ audio: true, video: false });
}

/**
 * A modifier of the early media's answer on a machine with no camera: its video is recvonly. sip.js sets every
 * transceiver of an answer to sendrecv; this sets the video ones to recvonly and has the browser make the answer
 * again (no SDP edited by hand).
 */
function receiveVideoOnly(invitation: Invitation) {
  return async (description: RTCSessionDescriptionInit): Promise<RTCSessionDescriptionInit> => {
    const sdh = invitation.sessionDescriptionHandler;
    const pc = sdh instanceof Web.SessionDescriptionHandler ? sdh.peerConnection : undefined;
    if (!pc || description.type !== 'answer') return description;
    for (const t of pc.getTransceivers())
      if (t.receiver.track.kind === 'video' && t.direction !== 'stopped') t.direction = 'recvonly';
    return pc.createAnswer();
  };
}

/** Ends a session the way the reducer asked, or whatever way its state allows. */
function endSession(session: Session, how: 'cancel' | 'bye' | 'reject' | 'terminate'): void {
  const ignore = () => {};
  if (session.state === SessionState.Terminated || session.state === SessionState.Terminating) return;
  if (session.state === SessionState.Established) {
    session.bye().catch(ignore);
    return;
  }
  if (session instanceof Inviter && (how === 'cancel' || how === 'terminate')) {
    session.cancel().catch(ignore);
    return;
  }
  if (session instanceof Invitation) {
    session.reject({ statusCode: 486 }).catch(ignore);
    return;
  }
  session.dispose().catch(ignore);
}
