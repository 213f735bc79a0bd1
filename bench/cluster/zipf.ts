/**
 * A Zipf-distributed key sequence, the same for every peer of a figure: `draws` ranks in
 * [0, keys), rank r drawn with probability proportional to 1 / (r + 1)^s, from a seeded PRNG by
 * inverse CDF (a binary search of the cumulative weights), precomputed so that drawing costs the
 * measured loops nothing.
 */
export function zipfDraws(keys: number, s: number, draws: number, seed: number): Uint32Array {
  const cdf = new Float64Array(keys);
  let total = 0;
  for (let r = 0; r < keys; r++) cdf[r] = total += 1 / Math.pow(r + 1, s);
  const random = mulberry32(seed);
  const out = new Uint32Array(draws);
  for (let i = 0; i < draws; i++) {
    const u = random() * total;
    let lo = 0;
    let hi = keys - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
  return out;
}

/** Share of the draws that fall on the `top` most frequent ranks (a check on the sequence). */
export function topShare(draws: Uint32Array, top: number): number {
  let n = 0;
  for (const r of draws) if (r < top) n++;
  return n / draws.length;
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1); enough for a benchmark's key sequence. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
