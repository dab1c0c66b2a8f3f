import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import { startTestServer, type TestServer } from '../support/server';
import { admin, uid } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let configDir: string;
let userId: number;
let picture: string;
beforeAll(async () => {
  expect(buildCli().status).toBe(0);
  ts = await startTestServer();
  configDir = freshConfigDir();
  const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(login.code).toBe(0);
  const api = await admin(ts);
  const role = (await getCommand('role.list').run({ api }, { limit: 1, sort: 'id' })).data[0]!.id;
  const group = (await getCommand('group.full').run({ api }, {})).data[0]!.id;
  userId = (
    await getCommand('user.create').run(
      { api },
      { login: `cli${uid()}`, name: 'Cli Avatar', role, domains: [group], send_registration_link: false },
    )
  ).data.id;
  picture = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-pic-')), 'me.png');
  fs.writeFileSync(
    picture,
    await new Jimp({ width: 120, height: 90, color: 0x336699ff }).getBuffer('image/png'),
  );
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  if (picture) fs.rmSync(path.dirname(picture), { recursive: true, force: true });
});

describe('lintel users avatar-upload', () => {
  it('sends the file named by --image as multipart and prints the stored URL', async () => {
    const r = await lintel(
      [
        'users',
        'avatar-upload',
        String(userId),
        '--image',
        picture,
        '--x',
        '10',
        '--y',
        '5',
        '--size',
        '80',
        '--json',
      ],
      { configDir },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { avatar_url } = JSON.parse(r.stdout) as { avatar_url: string };
    expect((await fetch(`${ts.url}${avatar_url}`)).status).toBe(200);
  });

  it('names a missing file as bad usage', async () => {
    const r = await lintel(
      [
        'users',
        'avatar-upload',
        String(userId),
        '--image',
        '/nonexistent.png',
        '--x',
        '0',
        '--y',
        '0',
        '--size',
        '20',
      ],
      { configDir },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('image');
  });
});
