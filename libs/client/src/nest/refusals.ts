import { HttpException, HttpStatus, type ExecutionContext } from '@nestjs/common';
import type { RpcException } from '@nestjs/microservices';
import type { ClientAcquireReply } from '..';

/** The reply the guard saw; `policy: true` when the client made it up (no limiter answered). */
export type GuardReply = ClientAcquireReply;

/**
 * A GraphQL error for a refused field: graphql-js copies an original error's `extensions` into the
 * error it reports, so this needs no GraphQL package of its own.
 */
export class RateLimitGraphQlError extends Error {
  constructor(
    message: string,
    readonly extensions: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RateLimitGraphQlError';
  }
}

/** The status of a refusal over HTTP (docs/nestjs.md, Answers). */
function statusOf(reply: GuardReply): HttpStatus {
  switch (reply.code) {
    case 'UNAVAILABLE':
      return HttpStatus.SERVICE_UNAVAILABLE;
    case 'INVALID_REQUEST':
      return HttpStatus.BAD_REQUEST;
    // A quota the route names and the limiter does not know is the server's configuration.
    case 'UNKNOWN_QUOTA':
      return HttpStatus.INTERNAL_SERVER_ERROR;
    default:
      return HttpStatus.TOO_MANY_REQUESTS;
  }
}

function messageOf(reply: GuardReply): string {
  if (reply.code === 'UNAVAILABLE') return 'Rate limiter unavailable';
  if (statusOf(reply) === HttpStatus.TOO_MANY_REQUESTS) return 'Too Many Requests';
  return reply.reason ?? reply.code;
}

/** The exception a refused call ends with, in the form its transport expects. */
export function refusal(context: ExecutionContext, reply: GuardReply): Error {
  const type = context.getType<string>();
  if (type === 'rpc') return rpcException({ ...reply });
  const limited = statusOf(reply) === HttpStatus.TOO_MANY_REQUESTS;
  if (type === 'graphql') {
    return new RateLimitGraphQlError(messageOf(reply), {
      code: limited ? 'RATE_LIMITED' : reply.code,
      limiterCode: reply.code,
      retryAfterMs: reply.retryAfterMs,
    });
  }
  const status = statusOf(reply);
  return new HttpException(
    {
      statusCode: status,
      code: reply.code,
      message: messageOf(reply),
      retryAfterMs: reply.retryAfterMs,
    },
    status,
  );
}

/** Bad input for the limiter (a key too long, a bad cost): 400 naming the field, nothing charged. */
export function invalidInput(context: ExecutionContext, field: string, message: string): Error {
  const type = context.getType<string>();
  if (type === 'rpc') return rpcException({ code: 'INVALID_REQUEST', field, reason: message });
  if (type === 'graphql') {
    return new RateLimitGraphQlError(message, { code: 'BAD_USER_INPUT', field });
  }
  return new HttpException(
    { statusCode: HttpStatus.BAD_REQUEST, code: 'INVALID_REQUEST', field, message },
    HttpStatus.BAD_REQUEST,
  );
}

/**
 * Loaded on the first RPC refusal only, so that applications without microservices need no
 * @nestjs/microservices; Nest's RPC exception filter passes on nothing but an RpcException.
 */
function rpcException(error: object): RpcException {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const microservices = require('@nestjs/microservices') as {
    RpcException: new (error: object) => RpcException;
  };
  return new microservices.RpcException(error);
}
