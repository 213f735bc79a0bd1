import 'reflect-metadata';
import { NatsResponseJSONDeserializer } from '@nestjs/microservices/deserializers/nats-response-json.deserializer';
import { NatsRecordSerializer } from '@nestjs/microservices/serializers/nats-record.serializer';
import { envelopeReply, payloadBytes, readEnvelope } from './nest-envelope';

const SUBJECT = 'ratelimit.v1.acquire';

/** The bytes Nest's own NATS client publishes for a packet. */
function nestBytes(packet: { pattern: string; data: unknown; id?: string }): Uint8Array {
  return new NatsRecordSerializer().serialize(packet).data as Uint8Array;
}

const text = (s: string): Uint8Array => Buffer.from(s);

describe('readEnvelope', () => {
  const cases: [string, Uint8Array, { data: unknown; id: string | undefined } | undefined][] = [
    ['plain acquire', text('{"key":"a"}'), undefined],
    ['plain batch', text('{"requests":[{"key":"a"}]}'), undefined],
    ['empty payload', text(''), undefined],
    [
      'ClientProxy.send',
      nestBytes({ pattern: SUBJECT, data: { key: 'a' }, id: 'id-1' }),
      { data: { key: 'a' }, id: 'id-1' },
    ],
    [
      'ClientProxy.emit',
      nestBytes({ pattern: SUBJECT, data: { key: 'a' } }),
      { data: { key: 'a' }, id: undefined },
    ],
    [
      'look-alike: a pattern field beside request fields',
      text(`{"pattern":"${SUBJECT}","key":"a"}`),
      undefined,
    ],
    [
      'look-alike: the pattern of another subject',
      text('{"pattern":"other.acquire","data":{}}'),
      undefined,
    ],
    [
      'look-alike: an id that is not a string',
      text(`{"pattern":"${SUBJECT}","data":{},"id":5}`),
      undefined,
    ],
    ['look-alike: spaced JSON', text(`{ "pattern": "${SUBJECT}", "data": {} }`), undefined],
    ['look-alike: not JSON after the opening', text(`{"pattern":"${SUBJECT}",`), undefined],
    ['look-alike: pattern not a string', text('{"pattern":{"cmd":"x"},"data":{}}'), undefined],
    [
      'look-alike: nested past the JSON guards',
      text(`{"pattern":${'['.repeat(10_000)}`),
      undefined,
    ],
  ];

  it.each(cases)('%s', (_name, bytes, expected) => {
    expect(readEnvelope(bytes, SUBJECT)).toEqual(expected);
  });
});

describe('payloadBytes', () => {
  it('is the payload as the contract JSON, empty when the envelope has none', () => {
    expect(Buffer.from(payloadBytes({ data: { key: 'a' }, id: 'x' })).toString()).toBe(
      '{"key":"a"}',
    );
    expect(payloadBytes({ data: undefined, id: 'x' })).toHaveLength(0);
  });
});

describe('envelopeReply', () => {
  it('is read by Nest as the final response of the request', () => {
    const bytes = envelopeReply('id-"1"', text('{"allowed":true}'));

    expect(new NatsResponseJSONDeserializer().deserialize(bytes)).toEqual({
      id: 'id-"1"',
      response: { allowed: true },
      isDisposed: true,
    });
  });
});
