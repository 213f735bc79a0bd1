/**
 * Files named by environment variables (certificates, keys), read at start so that a wrong path
 * or a wrong file stops the process naming the variable. No message quotes a file's content.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { EnvName } from './env-variables';

export function readEnvFile(name: EnvName, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`${name}: cannot read ${path} (${code ?? String(error)})`);
  }
}

/** A PEM certificate (the first of a bundle), checked to parse. */
export function readCertificateFile(
  name: EnvName,
  path: string,
): { pem: Buffer; certificate: X509Certificate } {
  const pem = readEnvFile(name, path);
  try {
    return { pem, certificate: new X509Certificate(pem) };
  } catch {
    throw new Error(`${name}: ${path} holds no PEM certificate`);
  }
}

/** A PEM private key without a passphrase. */
export function readPrivateKeyFile(name: EnvName, path: string): KeyObject {
  const pem = readEnvFile(name, path);
  // PKCS#8 (BEGIN ENCRYPTED PRIVATE KEY) or traditional PEM (Proc-Type: 4,ENCRYPTED).
  if (
    /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4,ENCRYPTED/.test(pem.toString('latin1'))
  ) {
    throw new Error(`${name}: ${path} is encrypted (give the key without a passphrase)`);
  }
  try {
    return createPrivateKey(pem);
  } catch {
    throw new Error(`${name}: ${path} holds no PEM private key`);
  }
}
