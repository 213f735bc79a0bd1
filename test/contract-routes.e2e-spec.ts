/**
 * The routes the apps really register (methods included) are the table of docs/contract.md, HTTP:
 * both apps are built in this process, without NATS, and every route Fastify adds is recorded.
 * The unit test beside libs/contracts holds the table to the route constants; this one also
 * catches a route registered without them, and a method added or dropped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_ROUTES } from '@app/contracts';
import {
  contractDisagreements,
  type ExpectedRows,
} from '@app/contracts/contract-doc/disagreements.test-util';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RouteOptions } from 'fastify';
import { createAdminApp } from '../apps/admin/src/app';
import { readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import { createLimiterApp } from '../apps/limiter/src/app';

/** The order the docs write methods in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** GraphiQL's own files belong to its row, and the console's to the row of /assets. */
function documentedPath(path: string): string {
  for (const dir of [ADMIN_ROUTES.graphiql, ADMIN_ROUTES.consoleAssets]) {
    if (path.startsWith(`${dir}/`)) return dir;
  }
  return path;
}

/** `app path` → methods, for every route `create` registers once the app is initialised. */
async function registeredRoutes(
  app: string,
  create: () => Promise<NestFastifyApplication>,
  into: Map<string, Set<string>>,
): Promise<void> {
  const nest = await create();
  try {
    const fastify = nest.getHttpAdapter().getInstance();
    fastify.addHook('onRoute', (route: RouteOptions) => {
      const key = `${app} ${documentedPath(route.url)}`;
      const methods = into.get(key) ?? new Set<string>();
      for (const method of [route.method].flat()) methods.add(method);
      into.set(key, methods);
    });
    await nest.init();
  } finally {
    await nest.close();
  }
}

describe('docs/contract.md, HTTP routes', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'contract-routes-'));
  const saved = { ...process.env };

  beforeAll(() => {
    Object.assign(process.env, { NATS_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'error' });
  });

  afterAll(() => {
    process.env = saved;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists every route the limiter and the admin register, with its methods', async () => {
    const routes = new Map<string, Set<string>>();
    await registeredRoutes('limiter', () => createLimiterApp({ logger: false }), routes);
    await registeredRoutes(
      'admin',
      () => createAdminApp({ logger: false }, readAdminSettings()),
      routes,
    );
    const expected: ExpectedRows = new Map(
      [...routes].map(([key, methods]) => [
        key,
        { method: METHOD_ORDER.filter((m) => methods.has(m)).join(', ') },
      ]),
    );
    expect(expected.size).toBeGreaterThan(0);
    const code = 'the routes the apps register';
    expect(contractDisagreements('### Routes', ['app', 'path'], expected, code)).toEqual([]);
  });
});
