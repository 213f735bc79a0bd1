/**
 * scripts/nats-config.ts, the generator of the NATS users: each user reads only its own inboxes
 * (the apps' NATS_INBOX_PREFIX, a backend's own prefix), and options that would let one user read
 * another's replies are refused. The users at work on nats-server: test/nats-permissions.e2e-spec.ts.
 */
import { DEFAULT_NATS_INBOX_PREFIXES } from '@app/contracts';
import { natsServerConfig } from '../../scripts/nats-config';
import { runScript } from './app-facts';
import { configUsers } from './nats-config-file';

/** The wildcard subjects (inboxes) each user of the file may subscribe to. */
function subscriptions(config: string): Record<string, string> {
  const users = config.split(/\n {4}\{\n/).slice(1);
  return Object.fromEntries(
    users.map((block) => {
      const user = /^\s*user: (\S+)$/m.exec(block)![1]!;
      const allow = /subscribe: \{\s*allow: \[([^\]]*)\]/.exec(block)![1]!;
      const inboxes = [...allow.matchAll(/"([^" ]+\.>)"/g)].map((m) => m[1]);
      return [user, inboxes.join(' ')];
    }),
  );
}

const run = (...args: string[]): string => runScript('nats-config.ts', ...args);

describe('the NATS configuration generator', () => {
  it("gives the limiter and the admin their apps' inboxes, and callers nats.js's default", () => {
    expect(subscriptions(natsServerConfig())).toEqual({
      caller: '_INBOX.>',
      limiter: `${DEFAULT_NATS_INBOX_PREFIXES.limiter}.>`,
      admin: `${DEFAULT_NATS_INBOX_PREFIXES.admin}.>`,
    });
  });

  it('adds a user per backend of --callers, with inboxes and a password variable of its own', () => {
    const config = run('--callers', 'billing,search', '--limiter-inbox', 'acme.rl.inbox.limiter');
    expect(subscriptions(config)).toEqual({
      caller: '_INBOX.>',
      billing: '_INBOX_billing.>',
      search: '_INBOX_search.>',
      limiter: 'acme.rl.inbox.limiter.>',
      admin: '_INBOX_admin.>',
    });
    expect(configUsers(config)).toMatchObject({
      billing: 'NATS_BILLING_PASSWORD',
      search: 'NATS_SEARCH_PASSWORD',
    });
    // The same rights as `caller` otherwise.
    const publishes = (user: string) =>
      config
        .slice(config.indexOf(`user: ${user}\n`))
        .split('subscribe:')[0]!
        .split('publish:')[1];
    expect(publishes('billing')).toBe(publishes('caller'));
  });

  it.each([
    [{ limiterInbox: '_INBOX.limiter' }, 'the inboxes of caller ("_INBOX") and limiter'],
    [{ adminInbox: '_INBOX_limiter' }, 'the inboxes of limiter ("_INBOX_limiter") and admin'],
    [{ callers: ['limiter'] }, 'caller "limiter": given twice, or the name of a user'],
    [{ callers: ['a', 'a'] }, 'caller "a": given twice'],
    [{ callers: ['Billing'] }, 'caller "Billing": 1..32 of a-z'],
    [{ limiterInbox: 'rl.>' }, 'limiter inbox "rl.>": dot-separated tokens'],
    [{ adminInbox: 'a"b' }, 'admin inbox "a"b": dot-separated tokens'],
  ])('refuses %j', (options, message) => {
    expect(() => natsServerConfig(options)).toThrow(message);
  });

  it('refuses an unknown flag, printing its usage', () => {
    expect(() => run('--inbox', 'x')).toThrow(/usage: nats-config/);
  });
});
