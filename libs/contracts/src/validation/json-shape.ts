import { MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from '../messages/limits';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** Member counts of the objects open at each depth; reused, the scan never overlaps itself. */
const members = new Int32Array(MAX_JSON_DEPTH + 2);

/**
 * One pass over a JSON body's bytes, before JSON.parse sees it: what JSON.parse pays for is
 * containers and member names, not bytes (1 MiB of `[[]],[[]],…` or of one object's distinct names
 * takes it 0.1–0.3 s, a string of 1 MiB 2 ms). So a body may open at most MAX_JSON_DEPTH levels,
 * MAX_JSON_CONTAINERS objects and arrays in all, and MAX_JSON_MEMBERS members per object. Bytes
 * rather than text: a typed array reads faster than charCodeAt, and the structural characters are
 * ASCII, which UTF-8 never uses inside a multi-byte character. On malformed JSON the counts are
 * an estimate, which is enough: JSON.parse stops at the first error, and up to there they are exact.
 * `wrapped`: the body is carried in one object of the transport's own (a Nest envelope `{ pattern,
 * data, id }`), whose level is not the caller's and is not counted.
 * Returns the rule the body breaks, or undefined.
 */
export function jsonShapeProblem(bytes: Uint8Array, wrapped = false): string | undefined {
  const wrapper = wrapped ? 1 : 0;
  const maxDepth = MAX_JSON_DEPTH + wrapper;
  const maxContainers = MAX_JSON_CONTAINERS + wrapper;
  const length = bytes.length;
  let depth = 0;
  let containers = 0;
  for (let i = 0; i < length; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      i = closingQuote(bytes, i + 1);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
      if (++containers > maxContainers) {
        return `has more than ${MAX_JSON_CONTAINERS} objects and arrays`;
      }
      members[depth] = 0;
    } else if (c === COLON) {
      if (++members[depth]! > MAX_JSON_MEMBERS) {
        return `has an object of more than ${MAX_JSON_MEMBERS} members`;
      }
    } else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && depth > 0) {
      depth--;
    }
  }
  return undefined;
}

/** A string is read this many bytes at a time in a loop, then searched natively for a quote. */
const STRIDE = 32;

/**
 * The index of the quote that closes a string whose content starts at `from` (length if none).
 * Short strings (keys, names) end within the first stride; a long one costs one native search
 * per quote found plus a stride, so neither 1 MiB of text nor 1 MiB of `\"` is read byte by byte
 * in a loop that calls out for each quote.
 */
function closingQuote(bytes: Uint8Array, from: number): number {
  const length = bytes.length;
  let i = from;
  for (;;) {
    const end = Math.min(length, i + STRIDE);
    for (; i < end; i++) {
      const c = bytes[i]!;
      if (c === BACKSLASH)
        i++; // escapes the byte after it
      else if (c === QUOTE) return i;
    }
    if (i >= length) return length;
    const quote = bytes.indexOf(QUOTE, i);
    if (quote === -1) return length;
    // Escaped only after an odd run of backslashes (bytes before `i` are accounted for already).
    let run = 0;
    while (quote - run - 1 >= i && bytes[quote - run - 1] === BACKSLASH) run++;
    if (run % 2 === 0) return quote;
    i = quote + 1;
  }
}
