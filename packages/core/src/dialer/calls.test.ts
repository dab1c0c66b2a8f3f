import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Dialer } from '../constants';
import {
  holdsMedia,
  concernsDialer,
  initialCalls,
  joinRefusal,
  pruneCalls,
  reduceCalls,
  ServerStatusMapping,
  showsVideo,
  type CallEvent,
  type CallEffect,
  type CallsState,
  type ServerCall,
} from './calls';

const OWN = '1001';

/** Runs events from a state, collecting the effects of the last one. */
function run(state: CallsState, events: CallEvent[], now = 1000) {
  let effects: CallEffect[] = [];
  for (const e of events) ({ state, effects } = reduceCalls(state, e, now));
  return { state, effects };
}

const call = (s: CallsState, id: string) => s.calls.find((c) => c.speechId === id);
const status = (s: CallsState, id: string) => call(s, id)?.status;

function server(id: string, status: ServerCall['status'], patch: Partial<ServerCall> = {}): ServerCall {
  return {
    id,
    status,
    type: 'awaiting',
    caller: '2001',
    callee: '3000',
    answered_by: null,
    created_at: 1_700_000_000,
    info: { address: 'Entrance 1', user: null },
    ...patch,
  };
}

const empty = initialCalls(OWN);
/** one outgoing normal call answered */
const talking = run(empty, [
  { type: 'dial', speechId: 'a', number: '2002' },
  { type: 'session_accepted', speechId: 'a' },
]).state;
/** one awaiting call joined and answered */
const awaitingActive = run(empty, [
  { type: 'server_update', call: server('w', 'waiting') },
  { type: 'join', speechId: 'w' },
  { type: 'session_accepted', speechId: 'w' },
]).state;

describe('the server status mapping (spec part 1 §4)', () => {
  it('maps every server status', () => {
    expect(ServerStatusMapping).toEqual({
      new: 'new',
      calling: 'calling',
      destroyed: 'destroyed',
      answered: 'active',
      waiting: 'paused',
      answered_waiting: 'processed_paused',
    });
  });

  it.each([
    ['new', 'new'],
    ['calling', 'calling'],
    ['answered', 'active'],
    ['waiting', 'paused'],
    ['answered_waiting', 'processed_paused'],
  ] as const)('a server call %s is shown %s', (from, to) => {
    const { state } = run(empty, [{ type: 'server_update', call: server('s', from) }]);
    expect(status(state, 's')).toBe(to);
    expect(call(state, 's')).toMatchObject({ type: 'awaiting', hasSipSession: false, number: '2001' });
    expect(call(state, 's')!.started).toBe(1_700_000_000_000);
  });

  it('moves a known call along the server statuses and destroys it', () => {
    let { state } = run(empty, [{ type: 'server_update', call: server('s', 'waiting') }]);
    state = run(state, [
      { type: 'server_update', call: server('s', 'answered_waiting', { answered_by: '1001-x' }) },
    ]).state;
    expect(call(state, 's')).toMatchObject({
      status: 'processed_paused',
      answeredBy: '1001',
      answeredByOther: false,
    });
    const out = run(state, [{ type: 'server_update', call: server('s', 'destroyed') }], 2000);
    expect(call(out.state, 's')).toMatchObject({ status: 'destroyed', destroyedAt: 2000 });
    expect(out.effects).toEqual([]);
  });

  it('ignores a destroyed update for an unknown call and any update for a destroyed one', () => {
    expect(run(empty, [{ type: 'server_update', call: server('s', 'destroyed') }]).state.calls).toEqual([]);
    const gone = run(empty, [
      { type: 'server_update', call: server('s', 'waiting') },
      { type: 'server_update', call: server('s', 'destroyed') },
      { type: 'server_update', call: server('s', 'answered') },
    ]).state;
    expect(status(gone, 's')).toBe('destroyed');
  });

  it('marks a call answered by another user (the number before the dash)', () => {
    const { state } = run(empty, [
      { type: 'server_update', call: server('s', 'answered', { answered_by: '1002-abc' }) },
    ]);
    expect(call(state, 's')).toMatchObject({ status: 'active', answeredBy: '1002', answeredByOther: true });
    // a call answered elsewhere is not ours: it cannot be joined or ended from here
    expect(run(state, [{ type: 'join', speechId: 's' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
    expect(run(state, [{ type: 'hangup', speechId: 's' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });

  it('a ringing call answered by another user stops ringing here', () => {
    const out = run(empty, [
      { type: 'incoming', speechId: 'i', number: '2001' },
      { type: 'server_update', call: server('i', 'answered', { type: 'normal', answered_by: '1003-z' }) },
    ]);
    expect(call(out.state, 'i')).toMatchObject({
      status: 'active',
      answeredByOther: true,
      hasSipSession: false,
    });
    expect(out.effects).toEqual([{ type: 'end', speechId: 'i', how: 'terminate' }, { type: 'stop_ring' }]);
    expect(out.state.ringing).toBe(false);
  });

  it('the server ending a call with our session ends the session, not the server call again', () => {
    const out = run(awaitingActive, [{ type: 'server_update', call: server('w', 'destroyed') }], 3000);
    expect(status(out.state, 'w')).toBe('destroyed');
    expect(out.effects).toEqual([{ type: 'end', speechId: 'w', how: 'terminate' }]);
  });

  it('a server update does not move a call whose session is ours', () => {
    const out = run(talking, [
      { type: 'server_update', call: server('a', 'waiting', { type: 'normal', caller: OWN }) },
    ]);
    expect(status(out.state, 'a')).toBe('active');
  });

  it('an incoming INVITE for a call the server announced first rings it', () => {
    const out = run(empty, [
      { type: 'server_update', call: server('i', 'new', { type: 'normal' }) },
      { type: 'incoming', speechId: 'i', number: '2001', sos: true },
    ]);
    expect(call(out.state, 'i')).toMatchObject({ status: 'new', hasSipSession: true, sosCall: true });
    expect(out.effects).toEqual([{ type: 'ring' }]);
  });
});

describe('outgoing calls', () => {
  it('dialling: new call calling, invite, last number kept, selected', () => {
    const out = run(empty, [{ type: 'dial', speechId: 'a', number: ' 20-02 ', video: true }]);
    expect(call(out.state, 'a')).toMatchObject({
      status: 'calling',
      direction: 'outgoing',
      type: 'normal',
      number: '2002',
      video: true,
      hasSipSession: true,
    });
    expect(out.effects).toEqual([
      { type: 'invite', speechId: 'a', number: '2002', video: true, parentId: null },
    ]);
    expect(out.state.lastNumber).toBe('2002');
    expect(out.state.selectedId).toBe('a');
  });

  it('calling → active when the INVITE is accepted', () => {
    expect(status(talking, 'a')).toBe('active');
  });

  it('refuses calling one own number ("Unable to call your number") and changes nothing', () => {
    const out = run(empty, [{ type: 'dial', speechId: 'a', number: '10 01' }]);
    expect(out.effects).toEqual([{ type: 'refuse', code: 'own_number_call' }]);
    expect(out.state).toEqual(empty);
  });

  it('refuses a call with no number', () => {
    expect(run(empty, [{ type: 'dial', speechId: 'a', number: '  ' }]).effects).toEqual([
      { type: 'refuse', code: 'call_number_required' },
    ]);
  });

  it('refuses a speech id already in use', () => {
    expect(run(talking, [{ type: 'dial', speechId: 'a', number: '2003' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });

  it('ending: an unanswered normal call is cancelled, an answered one sends bye', () => {
    const calling = run(empty, [{ type: 'dial', speechId: 'a', number: '2002' }]).state;
    const c = run(calling, [{ type: 'hangup', speechId: 'a' }], 5000);
    expect(c.effects).toEqual([{ type: 'end', speechId: 'a', how: 'cancel' }]);
    expect(call(c.state, 'a')).toMatchObject({
      status: 'destroyed',
      destroyedAt: 5000,
      hasSipSession: false,
    });
    expect(run(talking, [{ type: 'hangup', speechId: 'a' }]).effects).toEqual([
      { type: 'end', speechId: 'a', how: 'bye' },
    ]);
  });

  it('the far end hanging up destroys the call', () => {
    const out = run(talking, [{ type: 'session_ended', speechId: 'a' }], 7000);
    expect(call(out.state, 'a')).toMatchObject({ status: 'destroyed', destroyedAt: 7000 });
    expect(out.effects).toEqual([]);
  });

  it('hanging up a destroyed or unknown call is refused', () => {
    const gone = run(talking, [{ type: 'session_ended', speechId: 'a' }]).state;
    expect(run(gone, [{ type: 'hangup', speechId: 'a' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
    expect(run(empty, [{ type: 'hangup', speechId: 'x' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });
});

describe('incoming calls', () => {
  const ringing = run(empty, [
    { type: 'incoming', speechId: 'i', number: '2001', callee: '3000', sos: true },
  ]);

  it('rings: status new, SOS marker, ring effect', () => {
    expect(call(ringing.state, 'i')).toMatchObject({
      status: 'new',
      direction: 'incoming',
      sosCall: true,
      callee: '3000',
    });
    expect(ringing.effects).toEqual([{ type: 'ring' }]);
    expect(ringing.state.ringing).toBe(true);
  });

  it('a second ringing call does not ring twice', () => {
    expect(run(ringing.state, [{ type: 'incoming', speechId: 'j', number: '2002' }]).effects).toEqual([]);
  });

  it('accepting makes it active, answers and stops the ring', () => {
    const out = run(ringing.state, [{ type: 'accept', speechId: 'i' }]);
    expect(status(out.state, 'i')).toBe('active');
    expect(out.effects).toEqual([{ type: 'answer', speechId: 'i' }, { type: 'stop_ring' }]);
  });

  it('accept only applies to a ringing incoming call', () => {
    expect(run(talking, [{ type: 'accept', speechId: 'a' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });

  it('ending a ringing call rejects it', () => {
    const out = run(ringing.state, [{ type: 'hangup', speechId: 'i' }]);
    expect(out.effects).toEqual([{ type: 'end', speechId: 'i', how: 'reject' }, { type: 'stop_ring' }]);
    expect(status(out.state, 'i')).toBe('destroyed');
  });

  it('the caller giving up stops the ring', () => {
    const out = run(ringing.state, [{ type: 'session_ended', speechId: 'i' }]);
    expect(out.effects).toEqual([{ type: 'stop_ring' }]);
  });

  it('an answered incoming call ended here terminates', () => {
    const answered = run(ringing.state, [{ type: 'accept', speechId: 'i' }]).state;
    expect(run(answered, [{ type: 'hangup', speechId: 'i' }]).effects).toEqual([
      { type: 'end', speechId: 'i', how: 'terminate' },
    ]);
  });
});

describe('early media: the door panel’s video before answering (issue 23 item 7)', () => {
  const offer = run(empty, [{ type: 'incoming', speechId: 'v', number: '2001', video: true }]);
  const previewing = run(offer.state, [{ type: 'early_media', speechId: 'v', ok: true }]);

  it('a call offering video rings and is answered provisionally (183 with an SDP answer): no video until sent', () => {
    expect(offer.effects).toEqual([{ type: 'progress', speechId: 'v' }, { type: 'ring' }]);
    expect(call(offer.state, 'v')).toMatchObject({ status: 'new', video: true, earlyMedia: 'starting' });
    expect(showsVideo(call(offer.state, 'v')!)).toBe(false);
  });

  it('once the 183 is sent the ringing card shows the video, and the ring goes on', () => {
    expect(previewing.effects).toEqual([]);
    expect(call(previewing.state, 'v')).toMatchObject({ status: 'new', earlyMedia: 'flowing' });
    expect(showsVideo(call(previewing.state, 'v')!)).toBe(true);
    expect(previewing.state.ringing).toBe(true);
    // the preview is no media of ours: another call may be placed without asking
    expect(previewing.state.calls.filter(holdsMedia)).toEqual([]);
    expect(run(previewing.state, [{ type: 'dial', speechId: 'd', number: '2002' }]).effects).toEqual([
      { type: 'invite', speechId: 'd', number: '2002', video: false, parentId: null },
    ]);
  });

  it('accepting answers (the 200 OK), stops the ring, and the video goes on', () => {
    const out = run(previewing.state, [{ type: 'accept', speechId: 'v' }]);
    expect(out.effects).toEqual([{ type: 'answer', speechId: 'v' }, { type: 'stop_ring' }]);
    expect(call(out.state, 'v')).toMatchObject({ status: 'active', earlyMedia: 'flowing' });
    expect(showsVideo(call(out.state, 'v')!)).toBe(true);
  });

  it('a call offering no video rings as before: no 183, no video', () => {
    const out = run(empty, [{ type: 'incoming', speechId: 'a', number: '2001' }]);
    expect(out.effects).toEqual([{ type: 'ring' }]);
    expect(call(out.state, 'a')).toMatchObject({ video: false, earlyMedia: 'none' });
    expect(showsVideo(call(out.state, 'a')!)).toBe(false);
  });

  it('an early media that could not be made leaves the call ringing without video; answering shows it', () => {
    const failed = run(offer.state, [{ type: 'early_media', speechId: 'v', ok: false }]);
    expect(call(failed.state, 'v')).toMatchObject({ status: 'new', earlyMedia: 'none' });
    expect(showsVideo(call(failed.state, 'v')!)).toBe(false);
    expect(failed.state.ringing).toBe(true);
    const answered = run(failed.state, [{ type: 'accept', speechId: 'v' }]).state;
    expect(showsVideo(call(answered, 'v')!)).toBe(true);
  });

  it('the panel giving up (CANCEL) during early media ends the call and the ring', () => {
    const out = run(previewing.state, [{ type: 'session_ended', speechId: 'v' }]);
    expect(out.effects).toEqual([{ type: 'stop_ring' }]);
    expect(call(out.state, 'v')).toMatchObject({ status: 'destroyed', hasSipSession: false });
    expect(showsVideo(call(out.state, 'v')!)).toBe(false);
  });

  it('rejecting a previewed call rejects the INVITE (the early dialog ends with it)', () => {
    expect(run(previewing.state, [{ type: 'hangup', speechId: 'v' }]).effects).toEqual([
      { type: 'end', speechId: 'v', how: 'reject' },
      { type: 'stop_ring' },
    ]);
  });

  it('answered by another user during early media: the session ends here, the video goes', () => {
    const out = run(previewing.state, [
      { type: 'server_update', call: server('v', 'answered', { type: 'normal', answered_by: '1002-1' }) },
    ]);
    expect(out.effects).toEqual([{ type: 'end', speechId: 'v', how: 'terminate' }, { type: 'stop_ring' }]);
    expect(showsVideo(call(out.state, 'v')!)).toBe(false);
  });

  it('a call the server announced first asks for early media when its INVITE comes', () => {
    const out = run(empty, [
      { type: 'server_update', call: server('s', 'new', { type: 'normal' }) },
      { type: 'incoming', speechId: 's', number: '2001', video: true },
    ]);
    expect(out.effects).toEqual([{ type: 'progress', speechId: 's' }, { type: 'ring' }]);
    expect(call(out.state, 's')).toMatchObject({ earlyMedia: 'starting', hasSipSession: true });
  });

  it('a late or stray early-media report changes nothing', () => {
    const ended = run(previewing.state, [{ type: 'session_ended', speechId: 'v' }]).state;
    expect(run(ended, [{ type: 'early_media', speechId: 'v', ok: true }]).state).toEqual(ended);
    expect(run(previewing.state, [{ type: 'early_media', speechId: 'v', ok: false }]).state).toEqual(
      previewing.state,
    );
    expect(run(empty, [{ type: 'early_media', speechId: 'x', ok: true }]).state).toEqual(empty);
  });
});

describe('awaiting calls', () => {
  const waiting = run(empty, [{ type: 'server_update', call: server('w', 'waiting') }]).state;

  it('joining: paused → joining (join effect) → active when accepted', () => {
    const j = run(waiting, [{ type: 'join', speechId: 'w' }]);
    expect(call(j.state, 'w')).toMatchObject({ status: 'joining', hasSipSession: true });
    expect(j.effects).toEqual([{ type: 'join', speechId: 'w' }]);
    expect(status(awaitingActive, 'w')).toBe('active');
  });

  it('pausing an active awaiting call ends the media session and sets paused', () => {
    const out = run(awaitingActive, [{ type: 'pause', speechId: 'w' }]);
    expect(call(out.state, 'w')).toMatchObject({ status: 'paused', hasSipSession: false });
    expect(out.effects).toEqual([{ type: 'end', speechId: 'w', how: 'terminate' }]);
  });

  it('ending an awaiting call stops it through the server, destroyed at once', () => {
    const out = run(awaitingActive, [{ type: 'hangup', speechId: 'w' }], 9000);
    expect(out.effects).toEqual([
      { type: 'end', speechId: 'w', how: 'terminate' },
      { type: 'stop_on_server', speechId: 'w' },
    ]);
    expect(call(out.state, 'w')).toMatchObject({ status: 'destroyed', destroyedAt: 9000 });
    // a paused one has no session to end
    expect(run(waiting, [{ type: 'hangup', speechId: 'w' }]).effects).toEqual([
      { type: 'stop_on_server', speechId: 'w' },
    ]);
  });

  it('our leg of an awaiting call ending leaves it paused on the platform', () => {
    const out = run(awaitingActive, [{ type: 'session_ended', speechId: 'w' }]);
    expect(call(out.state, 'w')).toMatchObject({ status: 'paused', hasSipSession: false });
  });

  it('an answered waiting call can be taken back by its own number, not by another', () => {
    const mine = run(empty, [
      { type: 'server_update', call: server('w', 'answered_waiting', { answered_by: `${OWN}-t` }) },
    ]).state;
    expect(run(mine, [{ type: 'join', speechId: 'w' }]).effects).toEqual([{ type: 'join', speechId: 'w' }]);
    const theirs = run(empty, [
      { type: 'server_update', call: server('w', 'answered_waiting', { answered_by: '1009-t' }) },
    ]).state;
    expect(run(theirs, [{ type: 'join', speechId: 'w' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });

  it('joining what is not paused is refused', () => {
    expect(run(awaitingActive, [{ type: 'join', speechId: 'w' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });
});

describe('hold and resume of a normal call', () => {
  it('pause holds (paused), resume unholds (joining) then active', () => {
    const p = run(talking, [{ type: 'pause', speechId: 'a' }]);
    expect(status(p.state, 'a')).toBe('paused');
    expect(p.effects).toEqual([{ type: 'hold', speechId: 'a' }]);
    const r = run(p.state, [{ type: 'join', speechId: 'a' }]);
    expect(status(r.state, 'a')).toBe('joining');
    expect(r.effects).toEqual([{ type: 'unhold', speechId: 'a' }]);
    expect(status(run(r.state, [{ type: 'session_accepted', speechId: 'a' }]).state, 'a')).toBe('active');
  });

  it('pausing a call not active is refused', () => {
    const calling = run(empty, [{ type: 'dial', speechId: 'a', number: '2002' }]).state;
    expect(run(calling, [{ type: 'pause', speechId: 'a' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });
});

describe('one active call at a time (spec part 1 §4)', () => {
  it('dialling while a normal call is active asks; accepting cancels it and dials', () => {
    const ask = run(talking, [{ type: 'dial', speechId: 'b', number: '2003' }]);
    const confirmation = {
      kind: 'switch',
      action: { type: 'dial', speechId: 'b', number: '2003', video: false },
      activeId: 'a',
      outcome: 'cancel',
    };
    expect(ask.effects).toEqual([{ type: 'ask', confirmation }]);
    expect(ask.state.pending).toEqual(confirmation);
    expect(ask.state.calls).toEqual(talking.calls);
    const yes = run(ask.state, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([
      { type: 'end', speechId: 'a', how: 'bye' },
      { type: 'invite', speechId: 'b', number: '2003', video: false, parentId: null },
    ]);
    expect(status(yes.state, 'a')).toBe('destroyed');
    expect(status(yes.state, 'b')).toBe('calling');
    expect(yes.state.pending).toBeNull();
  });

  it('declining leaves everything as it was', () => {
    const ask = run(talking, [{ type: 'dial', speechId: 'b', number: '2003' }]).state;
    const no = run(ask, [{ type: 'confirm', accept: false }]);
    expect(no.effects).toEqual([]);
    expect(no.state).toEqual({ ...talking, pending: null });
  });

  it('dialling while an awaiting call is active holds it and the new call is its follow-up', () => {
    const ask = run(awaitingActive, [{ type: 'dial', speechId: 'b', number: '4001' }]);
    expect(ask.effects[0]).toMatchObject({ type: 'ask', confirmation: { outcome: 'hold', activeId: 'w' } });
    const yes = run(ask.state, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([
      { type: 'end', speechId: 'w', how: 'terminate' },
      { type: 'invite', speechId: 'b', number: '4001', video: false, parentId: 'w' },
    ]);
    expect(status(yes.state, 'w')).toBe('paused');
    expect(call(yes.state, 'b')!.parentId).toBe('w');
  });

  it('joining while another call is active asks first', () => {
    const withWaiting = run(talking, [{ type: 'server_update', call: server('w', 'waiting') }]).state;
    const ask = run(withWaiting, [{ type: 'join', speechId: 'w' }]);
    expect(ask.effects[0]).toMatchObject({
      type: 'ask',
      confirmation: { kind: 'switch', outcome: 'cancel', activeId: 'a' },
    });
    const yes = run(ask.state, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([
      { type: 'end', speechId: 'a', how: 'bye' },
      { type: 'join', speechId: 'w' },
    ]);
  });

  it('accepting a ringing call while another is active asks first; the ring goes on until then', () => {
    const ringing = run(talking, [{ type: 'incoming', speechId: 'i', number: '2001' }]).state;
    const ask = run(ringing, [{ type: 'accept', speechId: 'i' }]);
    expect(ask.effects[0]).toMatchObject({ type: 'ask', confirmation: { kind: 'switch', activeId: 'a' } });
    const yes = run(ask.state, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([
      { type: 'end', speechId: 'a', how: 'bye' },
      { type: 'answer', speechId: 'i' },
      { type: 'stop_ring' },
    ]);
  });

  it('a confirmation whose call went meanwhile does nothing', () => {
    const ringing = run(talking, [{ type: 'incoming', speechId: 'i', number: '2001' }]).state;
    const ask = run(ringing, [
      { type: 'accept', speechId: 'i' },
      { type: 'session_ended', speechId: 'i' },
    ]).state;
    const yes = run(ask, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([]);
    expect(status(yes.state, 'a')).toBe('active');
  });

  it('a second request while one waits for an answer is refused, and so is a confirm with nothing asked', () => {
    const ask = run(talking, [{ type: 'dial', speechId: 'b', number: '2003' }]).state;
    expect(run(ask, [{ type: 'dial', speechId: 'c', number: '2004' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
    expect(run(empty, [{ type: 'confirm', accept: true }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });
});

describe('follow-up calls (spec part 1 §4)', () => {
  /** awaiting call w held for follow-up b, answered */
  const followUp = run(awaitingActive, [
    { type: 'dial', speechId: 'b', number: '4001' },
    { type: 'confirm', accept: true },
    { type: 'session_accepted', speechId: 'b' },
  ]).state;

  it('with the parent the only live call, ending the follow-up returns to it', () => {
    const out = run(followUp, [{ type: 'hangup', speechId: 'b' }]);
    expect(out.effects).toEqual([
      { type: 'end', speechId: 'b', how: 'bye' },
      { type: 'join', speechId: 'w' },
    ]);
    expect(status(out.state, 'w')).toBe('joining');
  });

  it('with more than one live call, asks whether to return; yes joins the parent', () => {
    const more = run(followUp, [{ type: 'server_update', call: server('x', 'waiting') }]).state;
    const out = run(more, [{ type: 'session_ended', speechId: 'b' }]);
    expect(out.effects).toEqual([{ type: 'ask', confirmation: { kind: 'return', speechId: 'w' } }]);
    const yes = run(out.state, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([{ type: 'join', speechId: 'w' }]);
    const no = run(out.state, [{ type: 'confirm', accept: false }]);
    expect(no.effects).toEqual([]);
    expect(status(no.state, 'w')).toBe('paused');
  });

  it('a call started from a selected paused awaiting call is its follow-up', () => {
    const held = run(awaitingActive, [{ type: 'pause', speechId: 'w' }]).state;
    const out = run(held, [{ type: 'dial', speechId: 'b', number: '4001' }]);
    expect(out.effects).toEqual([
      { type: 'invite', speechId: 'b', number: '4001', video: false, parentId: 'w' },
    ]);
  });

  it('no question when the parent is gone', () => {
    const gone = run(followUp, [{ type: 'server_update', call: server('w', 'destroyed') }]).state;
    expect(run(gone, [{ type: 'hangup', speechId: 'b' }]).effects).toEqual([
      { type: 'end', speechId: 'b', how: 'bye' },
    ]);
  });
});

describe('tones, mute and selection', () => {
  it('the door tone and other tones go to the active call', () => {
    expect(run(talking, [{ type: 'door_open', speechId: 'a' }]).effects).toEqual([
      { type: 'send_dtmf', speechId: 'a', tones: [{ tone: '#', durationMs: 160, gapMs: 1200 }] },
    ]);
    expect(run(talking, [{ type: 'dtmf', speechId: 'a', key: '5' }]).effects).toEqual([
      {
        type: 'send_dtmf',
        speechId: 'a',
        tones: [{ tone: '5', durationMs: 1000, gapMs: Dialer.otherToneGapMs }],
      },
    ]);
  });

  it('tones to a call not active, or a key not on the keypad, are refused', () => {
    const calling = run(empty, [{ type: 'dial', speechId: 'a', number: '2002' }]).state;
    expect(run(calling, [{ type: 'door_open', speechId: 'a' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
    expect(run(talking, [{ type: 'dtmf', speechId: 'a', key: 'A' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
  });

  it('mutes the mic and the volume', () => {
    const out = run(talking, [
      { type: 'mute', speechId: 'a', what: 'mic', muted: true },
      { type: 'mute', speechId: 'a', what: 'volume', muted: true },
    ]);
    expect(call(out.state, 'a')!.settings).toEqual({ micMuted: true, volumeMuted: true });
    expect(out.effects).toEqual([{ type: 'mute', speechId: 'a', what: 'volume', muted: true }]);
  });

  it('selects a call', () => {
    const two = run(talking, [
      { type: 'server_update', call: server('w', 'waiting') },
      { type: 'select', speechId: 'w' },
    ]);
    expect(two.state.selectedId).toBe('w');
  });
});

describe('destroyed calls stay listed 5 s (spec part 2 §9)', () => {
  it('is kept before 5 s and dropped at 5 s, on any event or by pruneCalls', () => {
    const ended = run(talking, [{ type: 'hangup', speechId: 'a' }], 10_000).state;
    expect(pruneCalls(ended, 10_000 + Dialer.destroyedCallKeptMs - 1).calls).toHaveLength(1);
    expect(pruneCalls(ended, 10_000 + Dialer.destroyedCallKeptMs).calls).toHaveLength(0);
    expect(run(ended, [{ type: 'prune' }], 15_000).state.calls).toEqual([]);
    expect(
      run(ended, [{ type: 'server_update', call: server('z', 'waiting') }], 15_000).state.calls.map(
        (c) => c.speechId,
      ),
    ).toEqual(['z']);
  });
});

// ---------------------------------------------------------------------------------------------------------

const ids = ['a', 'b', 'c', 'w', 'x'];
const idArb = fc.constantFrom(...ids);
const serverStatusArb = fc.constantFrom(
  'new',
  'calling',
  'answered',
  'waiting',
  'answered_waiting',
  'destroyed' as const,
);
const eventArb: fc.Arbitrary<CallEvent> = fc.oneof(
  fc.record({
    type: fc.constant('dial' as const),
    speechId: idArb,
    number: fc.constantFrom('2002', OWN, '', '3003'),
  }),
  fc.record({
    type: fc.constant('incoming' as const),
    speechId: idArb,
    number: fc.constantFrom('2001', '5000'),
    video: fc.boolean(),
  }),
  fc.record({ type: fc.constant('early_media' as const), speechId: idArb, ok: fc.boolean() }),
  fc.record({
    type: fc.constantFrom(
      'accept',
      'hangup',
      'pause',
      'join',
      'session_accepted',
      'session_ended',
      'door_open',
      'select' as const,
    ),
    speechId: idArb,
  }) as fc.Arbitrary<CallEvent>,
  fc.record({ type: fc.constant('confirm' as const), accept: fc.boolean() }),
  fc.record({ type: fc.constant('dtmf' as const), speechId: idArb, key: fc.constantFrom('1', '#', 'x') }),
  fc.record({
    type: fc.constant('server_update' as const),
    call: fc.record({
      id: idArb,
      status: serverStatusArb as fc.Arbitrary<ServerCall['status']>,
      type: fc.constantFrom('normal', 'awaiting' as const),
      caller: fc.constantFrom('2001', OWN),
      callee: fc.constant('3000'),
      answered_by: fc.constantFrom(null, `${OWN}-1`, '1002-2'),
      created_at: fc.constant(1_700_000_000),
      info: fc.constant(null),
    }),
  }),
  fc.record({
    type: fc.constant('join_failed' as const),
    speechId: idArb,
    status: fc.constantFrom(403, 404, 480),
  }),
  fc.constant({ type: 'prune' as const }),
);

describe('whatever the events (property)', () => {
  it('at most one call holds the media, destroyed calls go 5 s after, no effect targets a destroyed call', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(eventArb, fc.integer({ min: 0, max: 3000 })), { maxLength: 60 }),
        (steps) => {
          let state = initialCalls(OWN);
          let now = 0;
          for (const [event, dt] of steps) {
            now += dt;
            const before = state;
            const { state: next, effects } = reduceCalls(state, event, now);
            const beforePruned = pruneCalls(before, now);
            expect(next.calls.filter(holdsMedia).length).toBeLessThanOrEqual(1);
            expect(
              next.calls.filter((c) => c.status === 'active' && c.hasSipSession).length,
            ).toBeLessThanOrEqual(1);
            expect(new Set(next.calls.map((c) => c.speechId)).size).toBe(next.calls.length);
            for (const c of next.calls) {
              expect(c.status === 'destroyed').toBe(c.destroyedAt !== null);
              if (c.destroyedAt !== null)
                expect(now - c.destroyedAt).toBeLessThan(Dialer.destroyedCallKeptMs);
              if (c.status === 'destroyed') expect(c.hasSipSession).toBe(false);
            }
            for (const e of effects) {
              if (!('speechId' in e)) continue;
              const target = beforePruned.calls.find((c) => c.speechId === e.speechId);
              if (e.type === 'invite') expect(target).toBeUndefined();
              else expect(target?.status, `${e.type} → ${e.speechId}`).not.toBe('destroyed');
              // a call's early media is asked for as it starts ringing (new, or announced by the server first)
              if (e.type !== 'invite' && !(e.type === 'progress' && event.type === 'incoming'))
                expect(target).toBeDefined();
            }
            // a refusal changes nothing
            if (effects.some((e) => e.type === 'refuse')) expect(next).toEqual(beforePruned);
            // the ring is on exactly while a call rings here
            expect(next.ringing).toBe(
              next.calls.some((c) => c.direction === 'incoming' && c.status === 'new' && c.hasSipSession),
            );
            // a video shows only for a call of ours that offered it: ringing with its early media, or active
            for (const c of next.calls.filter(showsVideo)) {
              expect(c.video && c.hasSipSession && !c.answeredByOther).toBe(true);
              expect(c.status === 'active' || c.earlyMedia === 'flowing').toBe(true);
            }
            state = next;
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('a confirmation that no longer applies', () => {
  it('keeps the active call when the ringing call was answered by another user meanwhile', () => {
    const ask = run(talking, [
      { type: 'incoming', speechId: 'i', number: '2001' },
      { type: 'accept', speechId: 'i' },
      { type: 'server_update', call: server('i', 'answered', { type: 'normal', answered_by: '1005-q' }) },
    ]).state;
    const yes = run(ask, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([]);
    expect(status(yes.state, 'a')).toBe('active');
    expect(yes.state.pending).toBeNull();
  });

  it('does not dial a speech id taken meanwhile', () => {
    const ask = run(talking, [
      { type: 'dial', speechId: 'b', number: '2003' },
      { type: 'incoming', speechId: 'b', number: '2001' },
    ]).state;
    const yes = run(ask, [{ type: 'confirm', accept: true }]);
    expect(yes.effects).toEqual([]);
    expect(status(yes.state, 'a')).toBe('active');
  });
});

describe('joining a waiting call (issue 23: the join MESSAGE)', () => {
  /** a waiting call another concierge's number was rung for, heard of on the waiting calls' channel */
  const waiting = run(empty, [{ type: 'server_update', call: server('w', 'waiting', { callee: '3000' }) }]);

  it('a waiting call the server tells of shows as an awaiting card to join, ringing nothing', () => {
    expect(call(waiting.state, 'w')).toMatchObject({
      type: 'awaiting',
      status: 'paused',
      direction: 'incoming',
      number: '2001',
      hasSipSession: false,
      answeredByOther: false,
    });
    expect(waiting.state.ringing).toBe(false);
    expect(waiting.effects).toEqual([]);
  });

  it('join asks the phone to join (the MESSAGE), then the held INVITE accepted makes it active', () => {
    const joining = run(waiting.state, [{ type: 'join', speechId: 'w' }]);
    expect(joining.effects).toEqual([{ type: 'join', speechId: 'w' }]);
    expect(call(joining.state, 'w')).toMatchObject({ status: 'joining', hasSipSession: true });
    expect(joining.state.selectedId).toBe('w');
    const active = run(joining.state, [
      { type: 'session_accepted', speechId: 'w' },
      { type: 'server_update', call: server('w', 'answered', { answered_by: `${OWN}-1` }) },
    ]);
    expect(call(active.state, 'w')).toMatchObject({ status: 'active', answeredByOther: false });
    expect(active.state.ringing).toBe(false);
  });

  it('a refused join says why on its card and leaves the call as it was: waiting, not ours', () => {
    const joining = run(waiting.state, [{ type: 'join', speechId: 'w' }]).state;
    for (const [status, code] of [
      [403, 'call_join_forbidden'],
      [404, 'call_join_gone'],
      [480, 'cant_perform_action'],
    ] as const) {
      const out = run(joining, [{ type: 'join_failed', speechId: 'w', status }]);
      expect(out.effects).toEqual([]);
      expect(call(out.state, 'w')).toEqual({ ...call(waiting.state, 'w'), refusal: code });
      expect(out.state.ringing).toBe(waiting.state.ringing);
      expect(joinRefusal(status)).toBe(code);
    }
    const refused = run(joining, [{ type: 'join_failed', speechId: 'w', status: 403 }]).state;
    // the reason holds while the call is as it was; a new join, or a change the server tells, clears it
    expect(
      call(run(refused, [{ type: 'server_update', call: server('w', 'waiting') }]).state, 'w')?.refusal,
    ).toBe('call_join_forbidden');
    expect(call(run(refused, [{ type: 'join', speechId: 'w' }]).state, 'w')?.refusal).toBeNull();
    expect(
      call(
        run(refused, [{ type: 'server_update', call: server('w', 'answered', { answered_by: '1002-1' }) }])
          .state,
        'w',
      )?.refusal,
    ).toBeNull();
    // a refusal for a call no longer joining changes nothing but is still said
    const late = run(waiting.state, [{ type: 'join_failed', speechId: 'w', status: 404 }]);
    expect(late.state).toEqual(waiting.state);
    expect(late.effects).toEqual([{ type: 'join_refused', code: 'call_join_gone' }]);
  });

  it('a waiting call answered by another user shows disabled and cannot be joined', () => {
    const taken = run(waiting.state, [
      { type: 'server_update', call: server('w', 'answered', { answered_by: '1002-1' }) },
    ]);
    expect(call(taken.state, 'w')).toMatchObject({ answeredByOther: true, answeredBy: '1002' });
    expect(run(taken.state, [{ type: 'join', speechId: 'w' }]).effects).toEqual([
      { type: 'refuse', code: 'cant_perform_action' },
    ]);
    expect(
      call(run(taken.state, [{ type: 'server_update', call: server('w', 'destroyed') }]).state, 'w')?.status,
    ).toBe('destroyed');
  });

  it('a waiting call ringing here (the intercepting concierge) keeps ringing as an awaiting call', () => {
    const rung = run(empty, [
      { type: 'incoming', speechId: 'w', number: '2001', callee: '3000' },
      { type: 'server_update', call: server('w', 'waiting') },
    ]);
    expect(call(rung.state, 'w')).toMatchObject({ type: 'awaiting', status: 'new', hasSipSession: true });
    expect(rung.state.ringing).toBe(true);
    // another concierge took it: the ring stops, our INVITE ends
    const taken = run(rung.state, [
      { type: 'server_update', call: server('w', 'answered', { answered_by: '1002-1' }) },
    ]);
    expect(taken.effects).toEqual([{ type: 'end', speechId: 'w', how: 'terminate' }, { type: 'stop_ring' }]);
    expect(call(taken.state, 'w')).toMatchObject({ answeredByOther: true, hasSipSession: false });
  });

  it('its ring ended by the SIP server before the news (another concierge took it): shown answered by him', () => {
    const rung = run(empty, [
      { type: 'incoming', speechId: 'w', number: '2001', callee: '3000' },
      { type: 'server_update', call: server('w', 'waiting') },
    ]).state;
    const cancelled = run(rung, [{ type: 'session_ended', speechId: 'w' }]);
    expect(call(cancelled.state, 'w')).toMatchObject({ status: 'paused', hasSipSession: false });
    expect(cancelled.effects).toEqual([{ type: 'stop_ring' }]);
    const taken = run(cancelled.state, [
      { type: 'server_update', call: server('w', 'answered', { answered_by: '1002-1' }) },
    ]);
    expect(call(taken.state, 'w')).toMatchObject({ status: 'active', answeredByOther: true });
  });

  it('the call list keeps the calls of our number and the awaiting ones', () => {
    const normal = (patch: Partial<ServerCall>) => server('x', 'answered', { type: 'normal', ...patch });
    expect(concernsDialer(server('w', 'waiting'), OWN)).toBe(true);
    expect(concernsDialer(normal({ caller: OWN }), OWN)).toBe(true);
    expect(concernsDialer(normal({ callee: OWN }), OWN)).toBe(true);
    expect(concernsDialer(normal({ answered_by: `${OWN}-2` }), OWN)).toBe(true);
    expect(concernsDialer(normal({ answered_by: '1002-2' }), OWN)).toBe(false);
    expect(concernsDialer(normal({}), OWN)).toBe(false);
  });
});
