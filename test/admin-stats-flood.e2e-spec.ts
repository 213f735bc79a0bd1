/**
 * A flood of stats reports cannot grow the admin's memory (issue 25 point 1: 152 -> 480 MiB).
 * The admin's StatsAggregator in this process on the shared NATS, with bounds smaller than
 * REPORT_BOUNDS so that a flood a busy machine reads within the 3 s a replica is remembered
 * fills them; the flood comes from a plain nats.js client: forged replicas, each report with
 * many quotas. What the aggregator holds is asserted (replicas, quota counts, bytes), not the
 * process's memory.
 */
import { controlNames } from '@app/contracts';
import { Global, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { ControlModule, NatsConnectionService, StatsAggregator } from '../apps/admin/src/control';
import {
  STATS_REPORT_BOUNDS,
  type ReportBounds,
} from '../apps/admin/src/control/stats-aggregator.service';
import { readAdminSettings } from '../apps/admin/src/settings/admin-settings';
import { SettingsModule } from '../apps/admin/src/settings/settings.module';
import { CONTROL_KEYS_ENV, limiterReportHeaders } from './support/control-keys';
import { statsReport } from './support/forged-control';
import { waitUntil } from './support/nats-process';

jest.setTimeout(120_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const BOUNDS: ReportBounds = { replicas: 50, quotasPerReport: 500, bytes: 256 * 1024 };

@Global()
@Module({
  providers: [{ provide: STATS_REPORT_BOUNDS, useValue: BOUNDS }],
  exports: [STATS_REPORT_BOUNDS],
})
class SmallBounds {}

async function startAggregator(
  env: Record<string, string>,
): Promise<{ app: INestApplicationContext; aggregator: StatsAggregator; subject: string }> {
  const prefix = `test.${randomUUID().replaceAll('-', '')}`;
  const settings = readAdminSettings({
    NATS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    DATA_DIR: '/nonexistent',
    ...env,
  });
  const app = await NestFactory.createApplicationContext(
    {
      module: class FloodTestModule {},
      imports: [SmallBounds, SettingsModule.forRoot(settings), ControlModule],
    },
    { logger: false },
  );
  await waitUntil('connected', () => app.get(NatsConnectionService).isUp);
  return {
    app,
    aggregator: app.get(StatsAggregator),
    subject: controlNames(prefix).statsReport,
  };
}

describe('the admin under a flood of stats reports', () => {
  let nc: NatsConnection;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc.close();
  });

  it('without report keys: holds at most its bounds of replicas and bytes, refusing the rest', async () => {
    const { app, aggregator, subject } = await startAggregator({ REPORT_PUBLIC_KEYS: '' });
    try {
      // 80 replicas of one quota each: more than the replicas it keeps.
      for (let i = 0; i < 80; i++) nc.publish(subject, JSON.stringify(statsReport(`r-${i}`, 1)));
      await nc.flush();
      await waitUntil('the flood read', () => aggregator.refusedReports >= 30);
      expect(aggregator.refusedReports).toBe(30);
      expect(aggregator.held).toMatchObject({ replicas: BOUNDS.replicas, quotas: BOUNDS.replicas });
      expect(aggregator.current().replicas).toBe(BOUNDS.replicas);

      // Once they are forgotten: a report of more quotas than one may hold is refused whole,
      // then 20 reports of 400 quotas (~30 KB each): more bytes than it keeps.
      await waitUntil('the replicas forgotten', () => aggregator.liveReplicas() === 0, 10_000);
      const before = aggregator.refusedReports;
      nc.publish(subject, JSON.stringify(statsReport('big', BOUNDS.quotasPerReport + 1)));
      for (let i = 0; i < 20; i++) nc.publish(subject, JSON.stringify(statsReport(`q-${i}`, 400)));
      await nc.flush();
      const read = (): number => aggregator.held.replicas + aggregator.refusedReports - before;
      await waitUntil('the flood read', () => read() === 21);
      const held = aggregator.held;
      expect(held.bytes).toBeLessThanOrEqual(BOUNDS.bytes);
      // Full: one more report would not fit.
      const oneReport = Buffer.byteLength(JSON.stringify(statsReport('q-10', 400)));
      expect(held.bytes).toBeGreaterThan(BOUNDS.bytes - oneReport);
      expect(held.replicas).toBeLessThan(20);
      expect(held.quotas).toBe(held.replicas * 400);
      expect(aggregator.current().quotas.length).toBe(400);
    } finally {
      await app.close();
    }
  });

  it('with REPORT_PUBLIC_KEYS: holds nothing of unsigned reports, and takes a signed one once', async () => {
    const { app, aggregator, subject } = await startAggregator({
      REPORT_PUBLIC_KEYS: CONTROL_KEYS_ENV['REPORT_PUBLIC_KEYS']!,
    });
    try {
      for (let i = 0; i < 500; i++) nc.publish(subject, JSON.stringify(statsReport(`f-${i}`, 100)));
      const body = JSON.stringify(statsReport('real', 3));
      const signed = limiterReportHeaders(subject, 'real', 'g', body);
      nc.publish(subject, body, { headers: signed });
      // The same signed report again (replayed): refused too.
      nc.publish(subject, body, { headers: signed });
      await nc.flush();
      await waitUntil('the flood read', () => aggregator.refusedReports >= 501);
      expect(aggregator.refusedReports).toBe(501);
      expect(aggregator.held).toEqual({ replicas: 1, quotas: 3, bytes: Buffer.byteLength(body) });
      expect(aggregator.current().replicas).toBe(1);
    } finally {
      await app.close();
    }
  });
});
