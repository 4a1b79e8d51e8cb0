// TLS certificates made at test time with the machine's openssl, for https model servers on
// 127.0.0.1: a self-signed one, and a test authority with the leaves it signs (one for
// 127.0.0.1, one for another host name, one that has expired), plus a chain whose root nobody trusts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './paths';

export interface KeyAndCert {
  key: Buffer;
  cert: Buffer;
}

export interface TestCertificates {
  /** The test authority's certificate (a file, for NODE_EXTRA_CA_CERTS). */
  caFile: string;
  /** Self-signed for 127.0.0.1. */
  selfSigned: KeyAndCert;
  /** Signed by the test authority for 127.0.0.1. */
  trusted: KeyAndCert;
  /** Signed by the test authority for another host name. */
  otherHost: KeyAndCert;
  /** Signed by the test authority for 127.0.0.1, valid only in January 2020. */
  expired: KeyAndCert;
  /** Signed by a second authority that the server sends along and nobody trusts. */
  untrustedChain: KeyAndCert;
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
}

export function makeTestCertificates(): TestCertificates {
  const tmp = tempDir('coderag-tls-');
  const dir = tmp.path;
  const read = (name: string): Buffer => readFileSync(join(dir, name));
  const authority = (name: string): void =>
    openssl(dir, [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ]);
  const request = (name: string, cn: string): void =>
    openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  const sign = (name: string, ca: string, san: string): void => {
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\n`);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    ]);
  };
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'self.key',
    '-out',
    'self.pem',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  authority('test-ca');
  authority('unknown-ca');
  request('trusted', '127.0.0.1');
  sign('trusted', 'test-ca', 'IP:127.0.0.1');
  request('other', 'model.example.com');
  sign('other', 'test-ca', 'DNS:model.example.com');
  request('chained', '127.0.0.1');
  sign('chained', 'unknown-ca', 'IP:127.0.0.1');
  // `openssl x509` cannot backdate a certificate; `openssl ca` can, with a minimal authority's configuration.
  request('expired', '127.0.0.1');
  writeFileSync(join(dir, 'expired.ext'), 'subjectAltName=IP:127.0.0.1\n');
  mkdirSync(join(dir, 'db'));
  writeFileSync(join(dir, 'db', 'index.txt'), '');
  writeFileSync(join(dir, 'db', 'serial'), '01\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = test',
      '[test]',
      'database = db/index.txt',
      'new_certs_dir = db',
      'certificate = test-ca.pem',
      'private_key = test-ca.key',
      'serial = db/serial',
      'default_md = sha256',
      'policy = any',
      'unique_subject = no',
      '[any]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );
  openssl(dir, [
    'ca',
    '-batch',
    '-config',
    'ca.cnf',
    '-in',
    'expired.csr',
    '-out',
    'expired.pem',
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20200102000000Z',
    '-extfile',
    'expired.ext',
  ]);
  return {
    caFile: join(dir, 'test-ca.pem'),
    selfSigned: { key: read('self.key'), cert: read('self.pem') },
    trusted: { key: read('trusted.key'), cert: read('trusted.pem') },
    otherHost: { key: read('other.key'), cert: read('other.pem') },
    expired: { key: read('expired.key'), cert: read('expired.pem') },
    untrustedChain: { key: read('chained.key'), cert: Buffer.concat([read('chained.pem'), read('unknown-ca.pem')]) },
    cleanup: tmp.cleanup,
  };
}
