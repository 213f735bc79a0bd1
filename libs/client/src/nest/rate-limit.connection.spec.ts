import { RateLimitConnection } from './rate-limit.connection';

describe('RateLimitConnection.open', () => {
  it('refuses options with neither servers nor a connection, naming both', async () => {
    await expect(RateLimitConnection.open({})).rejects.toThrow('`servers` or `connection`');
  });

  it('refuses options with both, rather than guess which one is meant', async () => {
    const connection = {} as never;
    await expect(
      RateLimitConnection.open({ servers: 'nats://127.0.0.1:4222', connection }),
    ).rejects.toThrow('either `connection` or `servers`');
  });
});
