/**
 * What a user of rate-limiter-flexible writes for an LLM quota of three limits (requests per minute,
 * tokens per minute, requests per day), to set beside the engine's rpm+tpm+rpd figure. Each returns
 * `take(key)`, resolving true when the request is admitted; refusals reject in the library, as there.
 */
import { RateLimiterMemory, RateLimiterUnion } from 'rate-limiter-flexible';

/** One request's charge, as the engine's figure charges it. */
export const LLM_COST = { requests: 1, tokens: 100 } as const;

export type Take = (key: string) => Promise<boolean>;

/** The three limiters, each with its own key prefix (Union names its results by prefix). */
function threeLimiters(requestsLimit: number): {
  rpm: RateLimiterMemory;
  tpm: RateLimiterMemory;
  rpd: RateLimiterMemory;
} {
  return {
    rpm: new RateLimiterMemory({ keyPrefix: 'rpm', points: requestsLimit, duration: 60 }),
    tpm: new RateLimiterMemory({ keyPrefix: 'tpm', points: requestsLimit * 100, duration: 60 }),
    rpd: new RateLimiterMemory({ keyPrefix: 'rpd', points: requestsLimit, duration: 86_400 }),
  };
}

/**
 * `RateLimiterUnion` of the three: it consumes from every limiter and rejects if any rejects, so a
 * refusal by one still leaves the others charged. It takes one `points` for all its limiters, so it
 * cannot charge 1 request and 100 tokens in one call: it charges 1 to each (the same work).
 */
export function unionOfThree(requestsLimit: number): Take {
  const { rpm, tpm, rpd } = threeLimiters(requestsLimit);
  const union = new RateLimiterUnion(rpm, tpm, rpd);
  return (key) =>
    union.consume(key, LLM_COST.requests).then(
      () => true,
      () => false,
    );
}

/** Three awaited `consume` calls in sequence, each with its own cost; stops at the first refusal. */
export function threeConsumes(requestsLimit: number): Take {
  const { rpm, tpm, rpd } = threeLimiters(requestsLimit);
  return async (key) => {
    try {
      await rpm.consume(key, LLM_COST.requests);
      await tpm.consume(key, LLM_COST.tokens);
      await rpd.consume(key, LLM_COST.requests);
      return true;
    } catch {
      return false;
    }
  };
}
