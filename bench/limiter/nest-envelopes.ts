/** Payloads as a Nest ClientProxy (Transport.NATS) publishes them: `{ pattern, data, id }`. */
export function nestEnvelopes(subject: string, payloads: readonly Buffer[]): Buffer[] {
  return payloads.map((payload, i) =>
    Buffer.from(
      `{"pattern":${JSON.stringify(subject)},"data":${payload.toString('utf8')},"id":"bench-${i}"}`,
    ),
  );
}
