/**
 * A payload sent in a Nest envelope `{ pattern, data, id }` is judged exactly as the same payload
 * sent as plain JSON: the envelope's own level and object are not the payload's, so the JSON
 * guards (depth, objects and arrays, members) count only what the caller sent. Both paths as the
 * transport runs them: readEnvelope then the operation's parser on payloadBytes, or, for bytes
 * that are no envelope, the parser on the bytes themselves.
 */
import 'reflect-metadata';
import {
  MAX_BATCH_ENTRIES,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
  parseAcquireJson,
  parseBatchJson,
  parseReleaseJson,
  parseStatsJson,
  parseUsageJson,
  type ParseResult,
} from '@app/contracts';
import { NatsRecordSerializer } from '@nestjs/microservices/serializers/nats-record.serializer';
import fc from 'fast-check';
import { payloadBytes, readEnvelope } from './nest-envelope';

const SUBJECT = 'ratelimit.v1.op';

type Parser = (body: Uint8Array) => ParseResult<unknown>;

const parsers: readonly [string, Parser][] = [
  ['acquire', parseAcquireJson],
  ['batch', parseBatchJson],
  ['release', parseReleaseJson],
  ['usage', parseUsageJson],
  ['stats', parseStatsJson],
];

function plainPath(parse: Parser, payload: string): ParseResult<unknown> {
  return parse(Buffer.from(payload));
}

/** The bytes Nest's ClientProxy.send publishes for this payload, served as the transport does. */
function envelopePath(parse: Parser, payload: string): ParseResult<unknown> {
  const data: unknown = JSON.parse(payload);
  const bytes = new NatsRecordSerializer().serialize({ pattern: SUBJECT, data, id: 'id-1' })
    .data as Uint8Array;
  const envelope = readEnvelope(bytes, SUBJECT);
  return envelope === undefined ? parse(bytes) : parse(payloadBytes(envelope));
}

/** `levels` levels of arrays in all, the innermost holding 1, under the acquire's `extra`. */
const nestedExtra = (levels: number): string =>
  `{"key":"k","extra":${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}}`;

/** `containers` objects and arrays in all: the acquire itself and empty arrays in `extra`. */
const manyContainers = (containers: number): string =>
  `{"key":"k","extra":[${Array.from({ length: containers - 2 }, () => '[]').join(',')}]}`;

const manyMembers = (members: number): string =>
  `{"key":"k",${Array.from({ length: members - 1 }, (_, i) => `"f${i}":0`).join(',')}}`;

const batchOf = (entries: number): string =>
  `{"requests":[${Array.from({ length: entries }, (_, i) => `{"key":"k${i}","cost":{"requests":1}}`).join(',')}]}`;

const bounds: readonly [string, string][] = [
  ['nested at the bound', nestedExtra(MAX_JSON_DEPTH)],
  ['nested one level over', nestedExtra(MAX_JSON_DEPTH + 1)],
  ['objects and arrays at the bound', manyContainers(MAX_JSON_CONTAINERS)],
  ['objects and arrays one over', manyContainers(MAX_JSON_CONTAINERS + 1)],
  ['members at the bound', manyMembers(MAX_JSON_MEMBERS)],
  ['members one over', manyMembers(MAX_JSON_MEMBERS + 1)],
  ['a full batch', batchOf(MAX_BATCH_ENTRIES)],
  ['a batch one entry over', batchOf(MAX_BATCH_ENTRIES + 1)],
  ['a plain acquire', '{"key":"k","cost":{"requests":1,"tokens":5}}'],
  ['not an object', '[1,2]'],
];

describe('a payload in a Nest envelope is judged as the same payload in plain JSON', () => {
  it('the guards of the table count the payload alone', () => {
    // The table must straddle each bound: these are the payloads a plain caller may send.
    expect(plainPath(parseAcquireJson, nestedExtra(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(plainPath(parseAcquireJson, manyContainers(MAX_JSON_CONTAINERS)).ok).toBe(true);
    expect(plainPath(parseAcquireJson, nestedExtra(MAX_JSON_DEPTH + 1)).ok).toBe(false);
  });

  it.each(
    bounds.flatMap(([name, payload]) =>
      parsers.map(([op, parse]) => [name, op, parse, payload] as const),
    ),
  )('%s, on %s', (_name, _op, parse, payload) => {
    expect(envelopePath(parse, payload)).toEqual(plainPath(parse, payload));
  });

  it.each(parsers)('any JSON value, on %s', (_op, parse) => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: MAX_JSON_DEPTH + 2 }), (value) => {
        const payload = JSON.stringify(value);
        expect(envelopePath(parse, payload)).toEqual(plainPath(parse, payload));
      }),
      { numRuns: 300 },
    );
  });
});
