/** CONTRACT.md section 7's example config file, verbatim: tests of every reader start from it. */
export const CONTRACT_CONFIG_EXAMPLE = `defaults:                      # overrides the default quota
  limits: [{ name: rps, unit: requests, limit: 100, window: 1s, algorithm: fixed_window }]
  queue: { maxSize: 400, maxWaitMs: 30000 }
quotas:
  - name: api
    match: "api-*"
    limits:
      - { name: rps, unit: requests, limit: 10, window: 1s, algorithm: fixed_window }
      - { name: tpm, unit: tokens, limit: 40000, window: 1m, algorithm: sliding_window }
    queue: { maxSize: 100, maxWaitMs: 5000 }
    concurrency: { max: 5, leaseTtlMs: 60000 }
    scope: cluster
    onStoreFailure: local
providers: [openai, anthropic]  # enable built-in provider profiles
`;
