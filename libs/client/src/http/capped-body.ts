/**
 * A response body as text, read chunk by chunk up to `maxBytes`: undefined, with the rest left
 * unread (the stream is cancelled), when it declares or turns out to be longer. Counted after
 * fetch's decompression, so a small compressed body cannot expand past the cap either.
 */
export async function readCappedBody(
  response: Response,
  maxBytes: number,
): Promise<string | undefined> {
  const body = response.body;
  if (body === null) return '';
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await body.cancel();
    return undefined;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
