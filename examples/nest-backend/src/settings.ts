/** What the example reads from its environment. */
export interface Settings {
  readonly natsUrl: string;
  readonly subjectPrefix: string;
  readonly port: number;
  readonly host: string;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const port = Number(env['PORT'] || 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer 0..65535, got ${JSON.stringify(env['PORT'])}`);
  }
  return {
    natsUrl: env['NATS_URL'] || 'nats://127.0.0.1:4222',
    subjectPrefix: env['NATS_SUBJECT_PREFIX'] || 'ratelimit.v1',
    port,
    host: env['HOST'] || '0.0.0.0',
  };
}
