/** Size limits of the HTTP transport. */

/** The largest body accepted: NATS's default max_payload, so both transports take the same messages. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The longest path parameter the router takes, as sent (percent-encoded). A key of 256 UTF-8 bytes
 * is up to 768 characters encoded; Fastify's default of 100 would answer 414 to valid keys. Longer
 * ones still reach the handlers, so a slightly oversized key is answered 400 naming `key`.
 */
export const MAX_PATH_PARAM_LENGTH = 2048;
