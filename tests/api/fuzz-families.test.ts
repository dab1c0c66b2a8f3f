/**
 * Random bodies at the create and update route of every generic family (taken from `resources`): the
 * answer is a 2xx whose body satisfies the command's result schema, or a 4xx with a catalogue key — never a
 * 5xx. A 4xx writes nothing (checksums of the families' tables and the audit count are unchanged); a 2xx is
 * audited, and its reply is what a get then reads. Values mix plausible ones (real ids of groups, roles, markers, users; well-formed names, logins,
 * colours) with garbage, so that a share of the calls succeeds and feeds later ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, registry, relationCommands, resources, type Command } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, group, licence, rootGroup } from '../support/fixtures';
import { assignableRoles, fixedGroups, fuzzFamilies, poolOf, RUNS, tally } from '../support/fuzz-families';

let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  // licences on: a family (or field) behind a licence must be reached, not refused for the licence alone
  await licence(ts, everyFeatureOn());
  const root = await rootGroup(api);
  fixedGroups.push(root);
  const a = await group(api, 'Fuzz A', root, { logic_address: '1' });
  poolOf('group').push(a, await group(api, 'Fuzz B', root), await group(api, 'Fuzz A1', a));
  for (const [name, permissions] of [
    ['Fuzz low', ['users.view']],
    ['Fuzz mid', ['users.view', 'users.create', 'markers.view']],
  ] as const)
    poolOf('role').push(
      (await getCommand('role.create').run({ api }, { name, permissions: [...permissions] })).data.id,
    );
  const system = (
    await getCommand('role.list').run(
      { api },
      { filters: [{ field: 'is_system', rule: 'equals', value: true }] },
    )
  ).data;
  assignableRoles.push(...system.filter((r) => r.name !== 'Administrator').map((r) => r.id));
  for (const [name, color] of [
    ['Fuzz red', '#ff0000'],
    ['Fuzz blue', '#0000ff'],
  ] as const)
    poolOf('marker').push((await getCommand('marker.create').run({ api }, { name, color })).data.id);
  for (const type of ['entrance', 'floor'])
    poolOf('domain_type').push(
      (await getCommand('domain_type.create').run({ api }, { type, name: type })).data.id,
    );
  for (const number of ['100', '101'])
    poolOf('sip_number').push(
      (await getCommand('sip_number.create').run({ api }, { number, name: `Desk ${number}`, domain_id: a }))
        .data.id,
    );
  for (const login of ['fuzz1', 'fuzz2'])
    poolOf('user').push(
      (
        await getCommand('user.create').run(
          { api },
          {
            login,
            name: login,
            role: poolOf('role')[0]!,
            domains: [a],
            markers: [poolOf('marker')[0]!],
            send_registration_link: false,
          },
        )
      ).data.id,
    );
});
afterAll(async () => {
  await ts?.close();
});

fuzzFamilies(resources, () => ({ ts, api }));

/**
 * The commands this suite does not fuzz, by rule, each with its reason; the rest of the registry (the create
 * and update of every generic family) is fuzzed. A new command matches a rule or is fuzzed: else the
 * coverage test below names it.
 */
const NOT_FUZZED: { reason: string; matches: (cmd: Command) => boolean }[] = [
  {
    reason: 'public (no session): sign-in, registration and recovery have their own bad-input tests',
    matches: (c) => c.access === 'public',
  },
  {
    reason: 'reads (list, get and the other GETs): they write nothing; filters.test.ts fuzzes the list query',
    matches: (c) => c.http.method === 'GET',
  },
  {
    reason: 'deletes: their only arguments are ids (and `gently`), checked by bad-input.test.ts',
    matches: (c) => c.http.method === 'DELETE' || c.id.endsWith('.delete_all'),
  },
  {
    reason:
      'writes beside the generic families, not yet fuzzed (no values drawn from their args schemas yet)',
    matches: (c) =>
      [
        'session.logout',
        'profile.update',
        'profile.password',
        'profile.mobile_popup',
        'user.password',
        'user.send_registration_link',
        'user.avatar_upload',
        // a multipart image: tests/api/identifier-photo.test.ts sends a wrong type, a bad image and a GIF
        'identifier.photo_upload',
        'user.import_start',
        'user.import_rows',
        'user.import_commit',
        // an NDJSON stream, not a JSON body: tests/api/user-import-stream.test.ts sends it bad lines
        'user.import_stream',
        // an id only: tests/api/access-families.test.ts revokes twice and others' ids go through assertMay
        'identifier.revoke',
        // an NDJSON stream, then a file path and an action: tests/api/access-families.test.ts sends bad rows
        'identifier.import_attempt',
        'identifier.import_continue',
        'group.generate',
        'group.save_generated',
        'marker.apply',
        'seed.demo',
        'seed.scale',
        // backups.test.ts sends junk, newer-format and broken backup files; their other arguments are a
        // name and a list of entity sets (an enum)
        'backup.make',
        'backup.apply',
        'backup.apply_file',
        'backup.schedule_set',
        // licences.test.ts sends bad and hostile licence files and settings
        'licence.add_file',
        'licence.add_cloud',
        'licence.notify_update',
        // its only argument is the device's id (bad ids: bad-input.test.ts's rule for ids)
        'device.credentials_reset',
        'device.apply_settings',
        'device.restart',
        'device.reinit',
        'device.task_retry',
        'device.task_stop',
        // an id (bad ids: bad-input.test.ts's rule for ids); tests/devices/commands.test.ts sends a protocol
        // that is not one, unknown devices and pool serials
        'device.set_protocol',
        'device.init_apply',
        'device.sync_entities',
        'device.from_pool',
        // tests/devices/search.test.ts sends them malformed, reversed and oversized ranges and bad items
        'device.search',
        'device.add_found',
        // no arguments at all (NoArgs: anything else is a 400, as for every command)
        'device.broker_sync',
        // the SIP service: nothing, or a server type and address; tests/sip/register.test.ts sends an address
        // that is not one of its servers
        'sip.reinit',
        'sip.restart',
        // a call's speech id: tests/sip/calls.test.ts stops another number's call (item_not_found)
        'call.stop',
        // a flag and group ids: tests/sip/interception.test.ts starts with none and with a group the concierge
        // may not choose
        'call.intercept',
        // an id, nothing, and one boolean: tests/api/notifications.test.ts sends them bad and others' ids
        'notification.read',
        'notification.read_all',
        'notification.settings_update',
        // remote control: an id, a lock, a serial or a session id; tests/devices/remote-control.test.ts sends
        // a lock that does not exist, unknown and others' sessions, wrong device credentials
        'device.remote_session',
        'device.remote_session_keepalive',
        'device.remote_open_lock',
        'device.remote_reboot',
        // a door: an id and a lock; tests/cli/doors.test.ts sends a lock that does not exist, devices that are no
        // door and doors out of the caller's groups
        'door.open',
        // an id (bad ids: bad-input.test.ts's rule for ids); tests/api/webhooks.test.ts sends others' and
        // refused endpoints
        'webhook.test',
        // a worker's name (tests/api/system.test.ts sends unknown ones and the HTTP module itself)
        'worker.start',
        'worker.stop',
        'worker.restart',
        // addresses, prefixes and ranges: tests/api/ip-blocking.test.ts sends bad, out-of-range and reversed
        // ones; the settings are bounded integers and a flag
        'ip_blocking.status_set',
        'ip_blocking.unban_all',
        'ip_blocking.unban',
        'ip_blocking.whitelist_add',
        'ip_blocking.whitelist_delete',
        // the project's settings: bounded texts, a port, a flag and days; tests/api/settings.test.ts sends an
        // unreachable mail server and the password placeholder
        'settings.general_update',
        'settings.mail_update',
        'settings.mail_test',
        'settings.retention_update',
        // pass type, team and organisation texts and three PEMs; tests/api/identifier-files.test.ts sends a
        // text that is no PEM, a key of another certificate and the placeholder
        'settings.wallet_update',
        // the SIP settings and the push server: a realm, an address, ports, ICE servers, bounded seconds, a
        // provider with its keys; tests/api/telephony-settings.test.ts sends each field bad, a TURN server
        // without its credential, a key that is not one and the placeholder with nothing behind it
        'settings.sip_update',
        'settings.push_update',
        // white-label: a flag, a name, an address, an e-mail and a phone, and a logo as a multipart image;
        // tests/api/whitelabel.test.ts sends each field bad, a logo set by hand, a text as an image and an SVG
        'settings.whitelabel_update',
        'settings.whitelabel_logo_upload',
        'group.whitelabel_update',
        'group.whitelabel_logo_upload',
        // the broker: a restart's type (an enum) and two PEM files; tests/devices/broker-service.test.ts sends
        // a text that is no certificate, a key of another certificate, and both to an external broker
        'broker.restart',
        'settings.broker_update',
        // a type (an enum), a group id, a subject and a body whose placeholders tests/api/mail-templates.test.ts
        // leaves out
        'mail_template.create',
        'mail_template.update',
        'mail_template.preview',
        'mail_template.send_preview',
        // an integration's certificate: a PEM file; tests/api/integrations.test.ts sends a text that is no
        // certificate, one with a private key in it and an image
        'integration.certificate_upload',
        // a guest key: rule ids (only shareable ones the caller may give), a validity and a pass limit held to
        // the groups' limits; tests/devices/guest-access.test.ts sends foreign rules, periods and limits over
        // the limits and a pass without an end
        'guest_access.create',
        'guest_access.update',
      ].includes(c.id),
  },
  {
    reason:
      "devices' own calls (a device's credentials, not a session): tests/devices/gateway.test.ts sends them bad credentials and bodies",
    matches: (c) => c.access === 'device',
  },
  {
    reason:
      "the SIP server's own calls (its secret, not a session): tests/sip/calls.test.ts refuses sessions and wrong secrets",
    matches: (c) => c.access === 'sip',
  },
  {
    reason:
      "a relation's add and remove (derived from the declaration): a row's id and a bounded list of ids; tests/support/registry-suites.ts relationVerbsSuite sends every relation ids of no row, too many ids and repeats, tests/api/relation-verbs.test.ts another project's and an empty list",
    matches: (c) => resources.some((r) => relationCommands(r).includes(c)),
  },
];

describe('coverage', () => {
  it('fuzzes every command of the registry that no rule of NOT_FUZZED leaves out, with its reason', () => {
    const fuzzed: string[] = resources.flatMap((r) => [r.commands.create.id, r.commands.update.id]);
    const uncovered = [...registry.values()].filter(
      (c) => !fuzzed.includes(c.id) && !NOT_FUZZED.some((rule) => rule.matches(c)),
    );
    expect(uncovered.map((c) => c.id)).toEqual([]);
    // the rules leave out no command the suite fuzzes
    expect(
      [...registry.values()]
        .filter((c) => fuzzed.includes(c.id))
        .filter((c) => NOT_FUZZED.some((rule) => rule.matches(c)))
        .map((c) => c.id),
    ).toEqual([]);
  });
});

describe('the run as a whole', () => {
  it('reached every route, and both succeeded and was refused', () => {
    const routes = resources.flatMap((r) => [r.commands.create.id, r.commands.update.id]);
    expect(Object.keys(tally).sort()).toEqual([...routes].sort());
    if (process.env.FUZZ_REPORT)
      console.log(
        Object.fromEntries(
          Object.entries(tally).map(([k, t]) => [
            k,
            { ok: t.ok, refused: t.refused, keys: [...t.keys].join(' ') },
          ]),
        ),
      );
    const ok = Object.values(tally).reduce((s, t) => s + t.ok, 0);
    const refused = Object.values(tally).reduce((s, t) => s + t.refused, 0);
    // plausible values dominate: a good share of the calls must get through, and plenty must not
    expect(ok).toBeGreaterThan(routes.length * RUNS * 0.1);
    expect(refused).toBeGreaterThan(routes.length * RUNS * 0.1);
  });
});
