import { RateLimitConnection } from './rate-limit.connection';

describe('RateLimitConnection.open', () => {
  it('refuses options with neither servers nor a connection, naming both', async () => {
    await expect(RateLimitConnection.open({})).rejects.toThrow('`servers` or `connection`');
  });

  it('refuses connection options beside a connection it does not open', async () => {
    const connection = {} as never;
    await expect(
      RateLimitConnection.open({ connection, nats: { user: 'caller', pass: 'secret' } }),
    ).rejects.toThrow('`nats` options are for `servers`');
  });

  it('refuses options with both, rather than guess which one is meant', async () => {
    const connection = {} as never;
    await expect(
      RateLimitConnection.open({ servers: 'nats://127.0.0.1:4222', connection }),
    ).rejects.toThrow('either `connection` or `servers`');
  });
});
