/** The client of the ratelimit service (framework-free core). */
export {};
