import type { ConnectionOptions } from 'nats';

/** OpenSSL's `<hex>:error:<hex>:<library>:<function>:<reason>:<file>:<line>:...`: its reason. */
const OPENSSL_ERROR = /^[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/;

/**
 * Why a connection failed, as one line for a log or /readyz: the message of nats.js or Node
 * (`Authorization Violation`, `unable to verify the first certificate`) with its code, no stack.
 * The options' token and password are blanked should a message ever carry one.
 */
export function failureReason(error: unknown, options: ConnectionOptions): string {
  let text = String(error);
  if (error instanceof Error) {
    const message = error.message.trim().replace(/^'(.*)'$/, '$1');
    const reason = OPENSSL_ERROR.exec(message)?.[1] ?? message;
    const code = (error as { code?: unknown }).code;
    const named = typeof code === 'string' && code !== '' && !reason.includes(code);
    text = named ? `${reason} (${code})` : reason;
  }
  for (const secret of [options.token, options.pass]) {
    if (typeof secret === 'string' && secret.length >= 4) text = text.replaceAll(secret, '***');
  }
  return text.replace(/\s+/g, ' ');
}
