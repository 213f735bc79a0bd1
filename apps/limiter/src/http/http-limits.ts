/** Size limits of the HTTP transport. */

/** The largest body accepted: NATS's default max_payload, so both transports take the same messages. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The longest path parameter the router takes, as sent (percent-encoded). A key of 256 UTF-8 bytes
 * is up to 768 characters encoded; Fastify's default of 100 would answer 414 to valid keys. Longer
 * ones still reach the handlers, so a slightly oversized key is answered 400 naming `key`.
 */
export const MAX_PATH_PARAM_LENGTH = 2048;

/**
 * How long an idle keep-alive connection stays open between requests: Fastify's default, longer
 * than the 60 s idle timeout of common load balancers, so they close first and never send on a
 * connection the limiter is closing.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** How often Node checks the request and header timeouts: a slow request is cut within this much. */
export const TIMEOUT_CHECK_MS = 500;

/**
 * At SIGTERM, requests still unanswered this long before the drain deadline are answered 503
 * (the reply shape of their route), so their clients can read it before the connections close.
 */
export const ANSWER_BEFORE_DEADLINE_MS = 500;

/** The most header bytes a request may carry: Node's HTTP/1.1 limit, and the h2c SETTINGS' too. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * The streams an h2c session may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS): nginx's
 * default, where Node's is unbounded. Clients queue beyond it (Go's opens another connection).
 */
export const H2_MAX_CONCURRENT_STREAMS = 128;

/** The most header fields an h2c request may carry (Node's default, stated). */
export const H2_MAX_HEADER_LIST_PAIRS = 128;

/**
 * What nghttp2 may hold for one h2c session (streams, header tables, answers not yet sent), in
 * MB; past it new streams are refused. Node's default is 10.
 */
export const H2_MAX_SESSION_MEMORY_MB = 1;

/**
 * What one h2c session may hold in answers its client has not taken (written to its streams, not
 * yet sent): a few of the largest answers (a `/debug` page of 1 000 keys, a batch of 1 000
 * replies: 0.3 to 1 MB each). An answer that would take a session past it resets its stream; one
 * answer alone is always queued, whatever its size. (New streams are refused well before, past
 * H2_MAX_SESSION_MEMORY_MB: this bounds the answers of streams opened before then.)
 */
export const H2_MAX_UNREAD_BYTES = 4 * 1024 * 1024;

/**
 * What all h2c sessions together may hold in answers their clients have not taken: 16 sessions
 * at their own bound. Honest clients take their answers within milliseconds, so only clients that
 * do not read come near it, and the stalled ones are cut after HTTP_REQUEST_TIMEOUT_MS.
 */
export const H2_MAX_UNREAD_TOTAL_BYTES = 64 * 1024 * 1024;
