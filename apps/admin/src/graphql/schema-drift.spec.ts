import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaText } from './schema-text';

describe('apps/admin/schema.gql', () => {
  it('is what the resolvers generate (run `npm run schema` after changing the API)', async () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'schema.gql'), 'utf8');
    expect(await schemaText()).toBe(committed);
  });

  it('has every operation of CONTRACT section 5', async () => {
    const text = await schemaText();
    for (const field of [
      // Optional arguments keep `{ quotas { … } }` as it was (all of them).
      'quotas(after: String, first: Int): [Quota!]!',
      'quota(name: String!): Quota',
      'providers: [Provider!]!',
      'provider(name: String!): Provider',
      'keyStats(key: String!, quota: String): KeyStats!',
      'stats: StatsUpdate!',
      'auditLog(limit: Int = 100): [AuditEntry!]!',
      'upsertQuota(input: QuotaInput!): Quota!',
      'deleteQuota(name: String!): Boolean!',
      'setProviderEnabled(enabled: Boolean!, name: String!): Provider!',
      'setModelQuota(maxRpd: SafeInt!, maxRpm: SafeInt!, maxTpm: SafeInt!, model: String!, provider: String!): Provider!',
      'resetKey(key: String!, quota: String): ResetKeyResult!',
      'importConfig(document: String!, format: ImportFormat!): ImportResult!',
      'statsUpdated(quota: String): StatsUpdate!',
      'quotaChanged: QuotaChange!',
    ]) {
      expect(text).toContain(field);
    }
  });
});
