import type { Msg } from 'nats';
import { ReplyGuard } from './reply-guard';

const asking = (reply: string | undefined) => ({ subject: 'ratelimit.v1.acquire', reply }) as Msg;

describe('ReplyGuard of the request subjects', () => {
  const guard = ReplyGuard.forRequests('ratelimit.v1', 'acme.limiter.inbox');

  it.each([
    ['$JS.API.STREAM.PURGE.KV_ratelimit_v1_control'],
    ['$KV.ratelimit_v1_control.quota.api'],
    ['$SYS.REQ.SERVER.PING'],
    ['ratelimit.v1.control.reset'],
    ['ratelimit.v1'],
    ['_INBOX_limiter.abc.1'],
    ['acme.limiter.inbox.abc'],
  ])('refuses to answer on %s', (reply) => {
    expect(guard.refuses(asking(reply))).toBe(true);
  });

  it.each([
    ['_INBOX.abc.1'],
    ['_INBOX_admin.abc.1'],
    ['_INBOX_billing.abc.1'],
    ['_R_.abc.def'],
    ['ratelimit.v10.x'],
    ['_INBOX_limiters.x'],
    [''],
    [undefined],
  ])('answers on %s', (reply) => {
    expect(guard.refuses(asking(reply))).toBe(false);
  });

  it('counts what it refused', () => {
    const counting = ReplyGuard.forRequests('rl', undefined);
    counting.refuses(asking('$JS.API.INFO'));
    counting.refuses(asking('_INBOX.x'));
    counting.refuses(asking('rl.usage'));
    expect(counting.refused).toBe(2);
  });
});

describe('ReplyGuard of the control subjects', () => {
  it("answers the admin's inbox, never a $ subject or the service's own", () => {
    const guard = new ReplyGuard('ratelimit.v1', []);
    expect(guard.refuses(asking('_INBOX_admin.abc.1'))).toBe(false);
    expect(guard.refuses(asking('$JS.API.STREAM.DELETE.KV_x'))).toBe(true);
    expect(guard.refuses(asking('ratelimit.v1.acquire'))).toBe(true);
  });
});
