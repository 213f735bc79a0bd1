/**
 * RateLimitHttpClient behind a gateway that answers for the limiter with JSON of its own (a 502
 * `{ "message": ... }`, as API gateways do): that is no limiter answer, so the failure policy
 * answers, never a body passed off as an AcquireReply whose `allowed` is absent.
 */
import { createServer, type Server } from 'node:http';
import { LimiterUnavailableError, RateLimitHttpClient } from '@app/client';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(502, { 'content-type': 'application/json' });
    response.end('{"message":"An invalid response was received from the upstream server"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

it("acquire and decide answer by the failure policy ('closed')", async () => {
  const client = new RateLimitHttpClient({ baseUrl });
  for (const reply of [await client.acquire({ key: 'k' }), await client.decide({ key: 'k' })]) {
    expect(reply).toMatchObject({ allowed: false, code: 'UNAVAILABLE', policy: true, key: 'k' });
  }
  await client.close();
});

it("batch answers every entry by the failure policy ('open')", async () => {
  const client = new RateLimitHttpClient({ baseUrl, failurePolicy: 'open' });
  const replies = await client.batch([{ key: 'a' }, { key: 'b' }]);
  expect(replies).toMatchObject([
    { allowed: true, code: 'OK', policy: true, key: 'a' },
    { allowed: true, code: 'OK', policy: true, key: 'b' },
  ]);
  await client.close();
});

it("'throw' throws LimiterUnavailableError with reason invalid-reply, naming the rule broken", async () => {
  const client = new RateLimitHttpClient({ baseUrl, failurePolicy: 'throw' });
  const call = client.acquire({ key: 'k' });
  await expect(call).rejects.toBeInstanceOf(LimiterUnavailableError);
  await expect(call).rejects.toMatchObject({
    reason: 'invalid-reply',
    message: expect.stringMatching(/^the answer is not a limiter reply: allowed: /),
  });
  await client.close();
});
