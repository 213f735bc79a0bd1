/** The NestJS integration of the ratelimit client. */
export {};
