import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLimiterApp } from '../apps/limiter/src/app';

describe('limiter GET /healthz', () => {
  let app: NestFastifyApplication;
  let baseUrl: string;

  beforeAll(async () => {
    app = await createLimiterApp({ logger: false });
    await app.listen(0, '127.0.0.1');
    baseUrl = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers 200 OK as text/plain', async () => {
    const res = await fetch(`${baseUrl}/healthz`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('OK');
  });
});
