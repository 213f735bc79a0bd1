/**
 * How both apps reach NATS: the connection options read from the environment (servers, auth,
 * TLS), and the link that keeps one connection up, retries it and ends it.
 */
export { natsConnectionOptions } from './connection-options';
export { DEFAULT_NATS_URL } from './server-urls';
export {
  NatsLink,
  type LinkLogger,
  type NatsLinkEvents,
  type NatsLinkState,
  type NatsUpEvent,
} from './nats-link';
