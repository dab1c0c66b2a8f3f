import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A self-signed certificate and its key (PEM), made by openssl in `dir` (a folder of its own when none is
 * given, removed at once): what stands in for Apple's pass type certificate in the wallet tests.
 */
export function selfSigned(
  name: string,
  dir?: string,
): { cert: string; key: string; certFile: string | undefined } {
  const into = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-cert-'));
  const keyFile = path.join(into, `${name}.key`);
  const certFile = path.join(into, `${name}.pem`);
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile].concat([
        '-days',
        '2',
        '-subj',
        `/CN=Pass Type ID: pass.test.lintel.${name}/OU=TEAM123456/O=Lintel test`,
      ]),
      { stdio: 'ignore' },
    );
    const made = { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
    return { ...made, certFile: dir ? certFile : undefined };
  } finally {
    if (!dir) fs.rmSync(into, { recursive: true, force: true });
  }
}
