/**
 * Calling the limiter from a NestJS app with a plain ClientProxy (Transport.NATS): the limiter
 * accepts Nest's message envelope and answers in Nest's reply form, so `send` resolves to the
 * reply object of docs/contract.md (NATS). Subjects are `<prefix>.<operation>`, the prefix being
 * the limiter's NATS_SUBJECT_PREFIX (default `ratelimit.v1`).
 *
 * In a module:
 *   ClientsModule.register([
 *     { name: RATE_LIMITER, transport: Transport.NATS, options: { servers: ['nats://127.0.0.1:4222'] } },
 *   ])
 */
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { lastValueFrom, timeout } from 'rxjs';

export const RATE_LIMITER = 'RATE_LIMITER';

/** The fields of the limiter's acquire reply used here (docs/contract.md lists them all). */
export interface AcquireReply {
  readonly allowed: boolean;
  readonly code: string;
  readonly key: string;
  readonly remaining: number;
  readonly retryAfterMs: number;
  readonly requestId: string;
}

/** A service guarding its work with the limiter. */
@Injectable()
export class RateLimitedReports {
  constructor(@Inject(RATE_LIMITER) private readonly limiter: ClientProxy) {}

  async build(customerId: string): Promise<string> {
    const reply = await acquire(this.limiter, 'ratelimit.v1', `reports:${customerId}`);
    if (!reply.allowed) return `try again in ${reply.retryAfterMs} ms (${reply.code})`;
    return `report for ${customerId}`;
  }
}

/** One acquire: ClientProxy has no timeout of its own, so the caller bounds the wait. */
export function acquire(
  client: ClientProxy,
  subjectPrefix: string,
  key: string,
): Promise<AcquireReply> {
  return lastValueFrom(
    client.send<AcquireReply>(`${subjectPrefix}.acquire`, { key }).pipe(timeout(2_000)),
  );
}

/** The same outside a module: a ClientProxy made, used once and closed. */
export async function acquireWithClientProxy(
  natsUrl: string,
  subjectPrefix: string,
  key: string,
): Promise<AcquireReply> {
  const client = ClientProxyFactory.create({
    transport: Transport.NATS,
    options: { servers: [natsUrl] },
  });
  try {
    return await acquire(client, subjectPrefix, key);
  } finally {
    await client.close();
  }
}
