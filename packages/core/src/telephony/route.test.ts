import { describe, expect, it } from 'vitest';
import {
  decideRoute,
  decisionStableFor,
  encodePlan,
  ruleApplies,
  type RouteForwardRule,
  type RouteInput,
  type RouteNumber,
} from './route';

const num = (number: string, over: Partial<RouteNumber> = {}): RouteNumber => ({
  number,
  projectId: 1,
  isActive: true,
  owner: { kind: 'user', userId: Number(number) },
  forwardMode: 'disabled',
  forwardRules: [],
  forwardGroupNumbers: [],
  ...over,
});
const rule = (over: Partial<RouteForwardRule> = {}): RouteForwardRule => ({
  id: 1,
  type: 'redirect_if_no_answer',
  timeout: 10,
  numbers: ['300'],
  queues: [],
  days: [],
  period: null,
  ...over,
});
// Wednesday 2026-11-25, 12:00 UTC
const NOON_WED = Date.UTC(2026, 10, 25, 12, 0, 0);
const input = (over: Partial<RouteInput> = {}): RouteInput => ({
  caller: num('100'),
  callee: num('200'),
  dialled: '200',
  interceptions: [],
  now: NOON_WED,
  timeZone: 'UTC',
  ...over,
});
const END = { noanswer: -1, error: -1 };

describe('who may call', () => {
  it('a caller Lintel does not hold, or an inactive one, is refused', () => {
    expect(decideRoute(input({ caller: null }))).toMatchObject({ action: 'reject', code: 403 });
    expect(decideRoute(input({ caller: num('100', { isActive: false }) }))).toMatchObject({
      action: 'reject',
      reason: 'unknown_caller',
    });
  });
  it('calling one’s own number is refused', () => {
    expect(decideRoute(input({ dialled: '100', callee: num('100') }))).toMatchObject({
      action: 'reject',
      reason: 'own_number',
    });
  });
  it('an unknown number, or one of another project, is not found; an inactive one is unavailable', () => {
    expect(decideRoute(input({ callee: null, dialled: '999' }))).toEqual({
      action: 'reject',
      code: 404,
      reason: 'wrong_number',
    });
    expect(decideRoute(input({ callee: num('200', { projectId: 2 }) }))).toMatchObject({ code: 404 });
    expect(decideRoute(input({ callee: num('200', { isActive: false }) }))).toMatchObject({
      code: 480,
      reason: 'inactive',
    });
  });
});

describe('calls in from a SIP trunk', () => {
  const fromTrunk = { trunkId: 7, projectId: 1, caller: '79161234567' };
  it('a number the trunk carries is rung as any call to it, its forward rules included', () => {
    expect(decideRoute(input({ caller: null, fromTrunk }))).toEqual({
      action: 'route',
      via: 'direct',
      steps: [{ numbers: ['200'], timeout: 60, next: END }],
      rules: [],
    });
    const manual = num('200', {
      forwardMode: 'manual',
      forwardRules: [rule({ type: 'redirect_if_error', numbers: ['300'] })],
    });
    expect(decideRoute(input({ caller: null, fromTrunk, callee: manual }))).toMatchObject({
      via: 'forward',
      steps: [{ numbers: ['200'], next: { noanswer: -1, error: 1 } }, { numbers: ['300'] }],
    });
  });
  it('a number it does not carry (none, or another project’s) is a wrong number; an inactive one is unavailable', () => {
    expect(decideRoute(input({ caller: null, fromTrunk, callee: null, dialled: '999' }))).toEqual({
      action: 'reject',
      code: 404,
      reason: 'wrong_number',
    });
    expect(
      decideRoute(input({ caller: null, fromTrunk, callee: num('200', { projectId: 2 }) })),
    ).toMatchObject({ code: 404, reason: 'wrong_number' });
    expect(
      decideRoute(input({ caller: null, fromTrunk, callee: num('200', { isActive: false }) })),
    ).toMatchObject({ code: 480, reason: 'inactive' });
  });
  it('the outside caller is not rung back by a picked group, and a panel’s interception does not apply', () => {
    const picked = num('200', { forwardMode: 'picked', forwardGroupNumbers: ['79161234567', '201'] });
    expect(decideRoute(input({ caller: null, fromTrunk, callee: picked }))).toMatchObject({
      steps: [{ numbers: ['200', '201'] }],
    });
    expect(
      decideRoute(
        input({
          caller: null,
          fromTrunk,
          interceptions: [{ conciergeNumber: '900', groupIds: [1] }],
        }),
      ),
    ).toMatchObject({ via: 'direct', steps: [{ numbers: ['200'] }] });
  });
});

describe('the number itself', () => {
  it('rings the callee alone, 60 s, nothing after', () => {
    expect(decideRoute(input())).toEqual({
      action: 'route',
      via: 'direct',
      steps: [{ numbers: ['200'], timeout: 60, next: END }],
      rules: [],
    });
  });
  it('forward mode disabled ignores the rules', () => {
    const d = decideRoute(input({ callee: num('200', { forwardRules: [rule()] }) }));
    expect(d).toMatchObject({ via: 'direct', steps: [{ numbers: ['200'] }] });
  });
  it('picked rings the forward group’s numbers with it, without the caller or duplicates', () => {
    const d = decideRoute(
      input({
        callee: num('200', { forwardMode: 'picked', forwardGroupNumbers: ['201', '100', '201', '200'] }),
      }),
    );
    expect(d).toMatchObject({ steps: [{ numbers: ['200', '201'], next: END }] });
  });
});

describe('forward rules', () => {
  const manual = (rules: RouteForwardRule[]) => num('200', { forwardMode: 'manual', forwardRules: rules });

  it('redirect_if_no_answer: the callee rings for the rule’s timeout, then its numbers', () => {
    const d = decideRoute(input({ callee: manual([rule({ timeout: 3, numbers: ['300', '301'] })]) }));
    expect(d).toEqual({
      action: 'route',
      via: 'forward',
      steps: [
        { numbers: ['200'], timeout: 3, next: { noanswer: 1, error: -1 } },
        { numbers: ['300', '301'], timeout: 60, next: END },
      ],
      rules: [1],
    });
  });
  it('redirect_if_no_answer without a timeout waits 10 s', () => {
    const d = decideRoute(input({ callee: manual([rule({ timeout: 0 })]) }));
    expect(d.action === 'route' && d.steps[0]!.timeout).toBe(10);
  });
  it('redirect_if_error: the callee rings its full time; only a failure moves to the rule’s numbers', () => {
    const d = decideRoute(
      input({ callee: manual([rule({ id: 2, type: 'redirect_if_error', numbers: ['400'] })]) }),
    );
    expect(d).toMatchObject({
      steps: [
        { numbers: ['200'], timeout: 60, next: { noanswer: -1, error: 1 } },
        { numbers: ['400'], next: END },
      ],
      rules: [2],
    });
  });
  it('both rules: each failure follows its own chain', () => {
    const d = decideRoute(
      input({
        callee: manual([
          rule({ id: 1, numbers: ['300'], queues: [['301']] }),
          rule({ id: 2, type: 'redirect_if_error', numbers: ['400'] }),
        ]),
      }),
    );
    expect(d.action === 'route' && d.steps).toEqual([
      { numbers: ['200'], timeout: 10, next: { noanswer: 1, error: 3 } },
      { numbers: ['300'], timeout: 60, next: { noanswer: 2, error: 2 } },
      { numbers: ['301'], timeout: 60, next: END },
      { numbers: ['400'], timeout: 60, next: END },
    ]);
  });
  it('queues are tried in turn after the rule’s numbers, whatever the failure; an empty one is skipped', () => {
    const d = decideRoute(
      input({ callee: manual([rule({ numbers: [], queues: [['500', '501'], [], ['502']] })]) }),
    );
    expect(d.action === 'route' && d.steps.map((s) => [s.numbers, s.next])).toEqual([
      [['200'], { noanswer: 1, error: -1 }],
      [['500', '501'], { noanswer: 2, error: 2 }],
      [['502'], END],
    ]);
  });
  it('a number already rung, or the caller, is not rung again', () => {
    const d = decideRoute(
      input({ callee: manual([rule({ numbers: ['200', '100', '300'], queues: [['300']] })]) }),
    );
    expect(d.action === 'route' && d.steps.map((s) => s.numbers)).toEqual([['200'], ['300']]);
  });
  it('the first rule of a type that applies now is the one followed', () => {
    const d = decideRoute(
      input({
        callee: manual([
          rule({ id: 7, days: ['sat', 'sun'], numbers: ['700'] }),
          rule({ id: 8, numbers: ['800'] }),
          rule({ id: 9, numbers: ['900'] }),
        ]),
      }),
    );
    expect(d).toMatchObject({ rules: [8], steps: [{}, { numbers: ['800'] }] });
  });
  it('no rule applies now: the number alone, its full time', () => {
    const d = decideRoute(input({ callee: manual([rule({ days: ['mon'] })]) }));
    expect(d).toMatchObject({ via: 'direct', steps: [{ numbers: ['200'], timeout: 60 }], rules: [] });
  });
});

describe('days and periods', () => {
  it('days: the weekday in the zone', () => {
    expect(ruleApplies(rule({ days: ['wed'] }), NOON_WED, 'UTC')).toBe(true);
    expect(ruleApplies(rule({ days: ['thu'] }), NOON_WED, 'UTC')).toBe(false);
    // 23:00 UTC on Wednesday is Thursday in Moscow
    expect(ruleApplies(rule({ days: ['thu'] }), NOON_WED + 11 * 3600_000, 'Europe/Moscow')).toBe(true);
  });
  it('a period: from inclusive, to exclusive, in the zone; one spanning midnight', () => {
    const office = rule({ period: { from: 9 * 3600, to: 18 * 3600 } });
    expect(ruleApplies(office, NOON_WED, 'UTC')).toBe(true);
    expect(ruleApplies(office, Date.UTC(2026, 10, 25, 18, 0, 0), 'UTC')).toBe(false);
    expect(ruleApplies(office, Date.UTC(2026, 10, 25, 9, 0, 0), 'UTC')).toBe(true);
    // 16:00 UTC is 19:00 in Moscow
    expect(ruleApplies(office, Date.UTC(2026, 10, 25, 16, 0, 0), 'Europe/Moscow')).toBe(false);
    const night = rule({ period: { from: 22 * 3600, to: 6 * 3600 } });
    expect(ruleApplies(night, Date.UTC(2026, 10, 25, 23, 0, 0), 'UTC')).toBe(true);
    expect(ruleApplies(night, Date.UTC(2026, 10, 25, 5, 59, 0), 'UTC')).toBe(true);
    expect(ruleApplies(night, NOON_WED, 'UTC')).toBe(false);
  });
});

describe('how long a decision holds by the clock', () => {
  const manual = (rules: RouteForwardRule[]) => num('200', { forwardMode: 'manual', forwardRules: rules });
  it('nothing read from the clock: for ever', () => {
    expect(decisionStableFor(input())).toBe(Infinity);
    // rules without days or periods, or rules that are not followed (forward mode not manual)
    expect(decisionStableFor(input({ callee: manual([rule()]) }))).toBe(Infinity);
    expect(
      decisionStableFor(input({ callee: num('200', { forwardRules: [rule({ days: ['wed'] })] }) })),
    ).toBe(Infinity);
  });
  it('until the next start or end of a period, a second early', () => {
    const office = rule({ period: { from: 9 * 3600, to: 18 * 3600 } });
    // 12:00 → 18:00
    expect(decisionStableFor(input({ callee: manual([office]) }))).toBe(6 * 3600 - 1);
    // 18:00 itself → 09:00 the next day
    const at18 = Date.UTC(2026, 10, 25, 18, 0, 0);
    expect(decisionStableFor(input({ callee: manual([office]), now: at18 }))).toBe(15 * 3600 - 1);
    // the rule's decision does not change inside that window, and does right after it
    const now = NOON_WED + 500;
    const s = decisionStableFor(input({ callee: manual([office]), now }));
    const plan = (at: number) => JSON.stringify(decideRoute(input({ callee: manual([office]), now: at })));
    expect(plan(now + s * 1000)).toBe(plan(now));
    expect(plan(now + (s + 1) * 1000)).not.toBe(plan(now));
  });
  it("days: until the next local midnight, in the callee's zone", () => {
    // 12:00 UTC is 15:00 in Moscow: nine hours to its midnight
    expect(
      decisionStableFor(input({ callee: manual([rule({ days: ['wed'] })]), timeZone: 'Europe/Moscow' })),
    ).toBe(9 * 3600 - 1);
  });
  it('the nearest boundary of all the rules', () => {
    const callee = manual([
      rule({ period: { from: 9 * 3600, to: 18 * 3600 } }),
      rule({ id: 2, type: 'redirect_if_error', period: { from: 13 * 3600, to: 14 * 3600 } }),
    ]);
    expect(decisionStableFor(input({ callee }))).toBe(3600 - 1);
  });
  it('a change of the zone offset in the window: not at all', () => {
    // Europe/Berlin leaves summer time at 01:00 UTC on 2026-10-25
    const before = Date.UTC(2026, 9, 25, 0, 30, 0);
    const callee = manual([rule({ days: ['sun'] })]);
    expect(decisionStableFor(input({ callee, now: before, timeZone: 'Europe/Berlin' }))).toBe(0);
  });
});

describe('interception', () => {
  const panel = num('900', { owner: { kind: 'device', deviceId: 5, groupId: 42 } });
  it('a panel of an intercepted group calls the intercepting concierges, together, whoever it dialled', () => {
    const d = decideRoute(
      input({
        caller: panel,
        callee: num('200', { forwardMode: 'manual', forwardRules: [rule()] }),
        interceptions: [
          { conciergeNumber: '600', groupIds: [42, 43] },
          { conciergeNumber: '601', groupIds: [42] },
          { conciergeNumber: '602', groupIds: [44] },
        ],
      }),
    );
    expect(d).toEqual({
      action: 'route',
      via: 'interception',
      // they ring 20 s, then the call waits 300 s more, held by the SIP server (the server marks it waiting)
      steps: [{ numbers: ['600', '601'], timeout: 320, next: END }],
      rules: [],
    });
  });
  it('the ring and the wait as configured; the caller (a panel whose number a concierge holds) is not rung', () => {
    const d = decideRoute(
      input({
        caller: panel,
        callee: num('200'),
        interceptions: [
          { conciergeNumber: '601', groupIds: [42] },
          { conciergeNumber: '900', groupIds: [42] },
        ],
        waiting: { ringS: 5, holdS: 120 },
      }),
    );
    expect(d).toMatchObject({ via: 'interception', steps: [{ numbers: ['601'], timeout: 125, next: END }] });
  });
  it('even a number Lintel does not hold: the concierge takes the panel’s call', () => {
    const d = decideRoute(
      input({
        caller: panel,
        callee: null,
        dialled: '12',
        interceptions: [{ conciergeNumber: '600', groupIds: [42] }],
      }),
    );
    expect(d).toMatchObject({ via: 'interception' });
  });
  it('not a panel, or a group nobody intercepts: the usual way', () => {
    const interceptions = [{ conciergeNumber: '600', groupIds: [42] }];
    expect(decideRoute(input({ interceptions }))).toMatchObject({ via: 'direct' });
    const other = num('901', { owner: { kind: 'device', deviceId: 6, groupId: 7 } });
    expect(decideRoute(input({ caller: other, interceptions }))).toMatchObject({ via: 'direct' });
  });
});

describe('the plan for the SIP server', () => {
  it('encodes steps as timeout:next-on-no-answer:next-on-error:numbers', () => {
    expect(
      encodePlan([
        { numbers: ['200'], timeout: 3, next: { noanswer: 1, error: -1 } },
        { numbers: ['300', '301'], timeout: 60, next: END },
      ]),
    ).toBe('3:1:-1:200|60:-1:-1:300+301');
  });
});

describe('trunks', () => {
  const trunks = [
    { id: 1, groupIds: [10] },
    { id: 2, groupIds: [20, 30] },
  ];
  it('a number Lintel does not hold leaves through the trunk of the caller’s nearest group that has one', () => {
    expect(
      decideRoute(input({ callee: null, dialled: '74951234567', callerGroups: [30, 10], trunks })),
    ).toEqual({
      action: 'trunk',
      trunkId: 2,
    });
    expect(
      decideRoute(input({ callee: null, dialled: '74951234567', callerGroups: [40, 10], trunks })),
    ).toEqual({
      action: 'trunk',
      trunkId: 1,
    });
  });
  it('no trunk for the caller’s groups: not found; a number Lintel holds never leaves', () => {
    expect(decideRoute(input({ callee: null, dialled: '7495', callerGroups: [40], trunks }))).toMatchObject({
      code: 404,
    });
    expect(decideRoute(input({ callerGroups: [10], trunks }))).toMatchObject({ action: 'route' });
  });
});
