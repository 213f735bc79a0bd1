import type { TObject, TSchema } from '@sinclair/typebox';
import {
  ADMIN_HEADERS,
  ADMIN_ROUTES,
  API_ROUTES,
  GOCC_ROUTES,
  HEADERS,
  OPERATIONS_ROUTES,
} from '../routes';
import { httpStatusForCode, REPLY_CODES } from '../codes';
import { DEFAULT_NATS_SUBJECT_PREFIX, natsSubjects } from '../subjects';
import {
  CHANGE_COMMIT_KEY,
  changePartKey,
  CONTROL_HEADERS,
  controlNames,
  providerEntryKey,
  quotaEntryKey,
  STATS_REPORT_HEADERS,
} from '../control';
import { AcquireReplySchema, AcquireRequestSchema } from '../messages/acquire';
import { BatchReplySchema, BatchRequestSchema } from '../messages/batch';
import { ErrorReplySchema } from '../messages/error-reply';
import { GoccDebugPageSchema, GoccDebugReplySchema } from '../messages/gocc-debug';
import { ReleaseReplySchema, ReleaseRequestSchema } from '../messages/release';
import { KeyStatsSchema, LimitStatsSchema, StatsRequestSchema } from '../messages/stats';
import { UsageReplySchema, UsageRequestSchema } from '../messages/usage';
import {
  CONTRACT_DOC,
  contractDisagreements,
  keysOnly,
  type ExpectedRows,
} from './disagreements.test-util';
import { textUnder } from './markdown.test-util';

/** Every message of the contract, by the name the docs give it. */
const MESSAGES: ReadonlyMap<string, TObject> = new Map<string, TObject>([
  ['AcquireRequest', AcquireRequestSchema],
  ['AcquireReply', AcquireReplySchema],
  ['BatchRequest', BatchRequestSchema],
  ['BatchReply', BatchReplySchema],
  ['ReleaseRequest', ReleaseRequestSchema],
  ['ReleaseReply', ReleaseReplySchema],
  ['UsageRequest', UsageRequestSchema],
  ['UsageReply', UsageReplySchema],
  ['StatsRequest', StatsRequestSchema],
  ['KeyStats', KeyStatsSchema],
  ['LimitStats', LimitStatsSchema],
  ['ErrorReply', ErrorReplySchema],
  ['GoccDebugReply', GoccDebugReplySchema],
  ['GoccDebugPage', GoccDebugPageSchema],
]);
const NAMED_SCHEMAS: ReadonlySet<TSchema> = new Set(MESSAGES.values());

/** `message field` → always present; nested objects that are no message of their own as `a.b`. */
function messageFields(name: string, schema: TObject, prefix = ''): [string, { always: string }][] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).flatMap(([field, property]) => {
    const row: [string, { always: string }] = [
      `${name} ${prefix}${field}`,
      { always: required.has(field) ? 'yes' : 'no' },
    ];
    // A record (no fixed fields, e.g. GoCC's Instances by key) is one row.
    const nested =
      property.type === 'object' && 'properties' in property && !NAMED_SCHEMAS.has(property);
    return nested
      ? [row, ...messageFields(name, property as TObject, `${prefix}${field}.`)]
      : [row];
  });
}

function routes(app: string, table: Readonly<Record<string, string>>): string[] {
  return Object.values(table).map((path) => `${app} ${path}`);
}

function headers(on: string, table: Readonly<Record<string, string>>): [string, { on: string }][] {
  return Object.values(table).map((name) => [name, { on }]);
}

describe('docs/contract.md agrees with libs/contracts', () => {
  it('lists every NATS subject: the limiter operations and the control subjects', () => {
    const { bucket, ...control } = controlNames(DEFAULT_NATS_SUBJECT_PREFIX);
    const subjects = [...Object.values(natsSubjects()), ...Object.values(control)];
    const code = 'natsSubjects() and controlNames()';
    expect(contractDisagreements('### Subjects', ['subject'], keysOnly(subjects), code)).toEqual(
      [],
    );
    expect(textUnder(CONTRACT_DOC, '### The control bucket')).toContain(`\`${bucket}\``);
  });

  it('lists every kind of key in the control bucket', () => {
    const keys = [
      `${quotaEntryKey('')}<hex of name>`,
      `${providerEntryKey('')}<name>`,
      `${changePartKey(0).replace(/0$/, '')}<n>`,
      CHANGE_COMMIT_KEY,
    ];
    const code = 'control-entries.ts and control-change.ts';
    expect(contractDisagreements('### The control bucket', ['key'], keysOnly(keys), code)).toEqual(
      [],
    );
  });

  it('lists every HTTP route of the limiter and the admin', () => {
    const expected = keysOnly([
      ...routes('limiter', GOCC_ROUTES),
      ...routes('limiter', API_ROUTES),
      ...routes('limiter', OPERATIONS_ROUTES),
      ...routes('admin', ADMIN_ROUTES),
    ]);
    const code = 'the *_ROUTES of routes.ts';
    expect(contractDisagreements('### Routes', ['app', 'path'], expected, code)).toEqual([]);
  });

  it('lists every reply code with its HTTP status', () => {
    const expected: ExpectedRows = new Map(
      REPLY_CODES.map((code) => [code, { 'http status': String(httpStatusForCode(code)) }]),
    );
    expect(contractDisagreements('### Reply codes', ['code'], expected, 'REPLY_CODES')).toEqual([]);
  });

  it('lists every header, and where it travels', () => {
    const expected: ExpectedRows = new Map([
      ...headers('limiter HTTP', HEADERS),
      ...headers('admin HTTP', ADMIN_HEADERS),
      ...headers('NATS stats', STATS_REPORT_HEADERS),
      ...headers('NATS control', CONTROL_HEADERS),
    ]);
    const code = 'HEADERS, ADMIN_HEADERS, STATS_REPORT_HEADERS and CONTROL_HEADERS';
    expect(contractDisagreements('### Headers', ['header'], expected, code)).toEqual([]);
  });

  it('lists every field of every message, and whether it is always there', () => {
    const expected: ExpectedRows = new Map(
      [...MESSAGES].flatMap(([name, schema]) => messageFields(name, schema)),
    );
    const code = 'the message schemas';
    expect(
      contractDisagreements('### Message fields', ['message', 'field'], expected, code),
    ).toEqual([]);
  });
});
