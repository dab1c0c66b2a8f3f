/**
 * The API document (issue 24 item 6): `/api/v0/openapi.json` is an OpenAPI 3.1 document that a validator
 * which is not ours accepts, it names every command of the registry at its method and path with its gates,
 * and real replies of the server match the result schemas it documents (checked by Ajv, JSON Schema 2020-12).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { getCommand, openApiPath, registry } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, tokenOf } from '../support/fixtures';

type Json = Record<string, unknown>;
let ts: TestServer;
let api: ApiClient;
let doc: Json;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  // public: a client generator reads it before anyone signs in
  const res = await fetch(`${ts.url}/api/v0/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  doc = (await res.json()) as Json;
});
afterAll(() => ts?.close());

const operation = (method: string, path: string) =>
  ((doc.paths as Record<string, Record<string, Json>>)[openApiPath(path)] ?? {})[method.toLowerCase()];

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for a validator that is not ours', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // the validator can refuse: a parameter in the body is Swagger 2, not OpenAPI 3.1
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { parameters: Json[] }>> };
    broken.paths['/users/{id}']!.get!.parameters[0]!.in = 'body';
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });

  it('covers every command of the registry at its method and path, with its gates', () => {
    const missing: string[] = [];
    for (const cmd of registry.values()) {
      const op = operation(cmd.http.method, cmd.http.path);
      if (!op || op['x-lintel-command'] !== cmd.id) missing.push(cmd.id);
    }
    expect(missing).toEqual([]);
    const ops = Object.values(doc.paths as Record<string, Record<string, Json>>).flatMap((p) =>
      Object.values(p),
    );
    expect(ops.length).toBe(registry.size);
    // operation ids are unique (generators name functions after them)
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);

    const userList = operation('GET', '/users')!;
    expect(userList.description).toContain('`users.view`');
    expect(userList.security).toEqual([{ bearer: [] }]);
    const numbers = operation('GET', getCommand('sip_number.list').http.path)!;
    expect(numbers.description).toContain('Licence: `sip`');
    const login = operation('POST', getCommand('session.login').http.path)!;
    expect(login.security).toEqual([]);
    expect(login.requestBody).toMatchObject({
      content: { 'application/json': { schema: { type: 'object' } } },
    });
    // path parameters are declared as OpenAPI writes them
    const userGet = operation('GET', '/users/:id')!;
    expect(userGet.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    // a file upload is a multipart body with a binary part
    const applyFile = operation('POST', getCommand('backup.apply_file').http.path)!;
    const multipart = (applyFile.requestBody as Json).content as Record<string, { schema: Json }>;
    expect(multipart['multipart/form-data']!.schema).toMatchObject({
      properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } },
    });
  });

  it('documents replies as the server sends them (real replies checked against its schemas)', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [name, schema] of Object.entries((doc.components as Json).schemas as Record<string, Json>))
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    const check = async (id: string, method: string, path: string, query = '') => {
      const res = await fetch(`${ts.url}/api/v0${path}${query}`, {
        method,
        headers: { authorization: `Bearer ${tokenOf(api)}` },
      });
      expect(res.status, id).toBe(200);
      const body = (await res.json()) as unknown;
      const ref = (
        (operation(method, registry.get(id)!.http.path)!.responses as Record<string, Json>)['200']!
          .content as Record<string, { schema: { $ref: string } }>
      )['application/json']!.schema.$ref;
      const validate = ajv.getSchema(ref)!;
      const ok = validate(body);
      expect(ok ? [] : validate.errors, id).toEqual([]);
    };
    await check('server.info', 'GET', '/server-info');
    await check('profile.get', 'GET', getCommand('profile.get').http.path);
    await check('user.list', 'GET', '/users', '?limit=5');
    await check('role.list', 'GET', '/roles');
    await check('backup.list', 'GET', '/backups');

    // and a reply that breaks the schema is caught: the check can fail
    const validate = ajv.getSchema('#/components/schemas/ServerInfoResult')!;
    expect(validate({ name: 5 })).toBe(false);
  });
});
