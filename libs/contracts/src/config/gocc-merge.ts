import { RE2JS } from 're2js';
import { REGEX_MATCH_PREFIX } from '../key-match';
import type { QuotaSpec } from '../quota-spec';
import { goccQuota, type GoccSettings } from './gocc-default';
import type { IssueList } from './issues';

/**
 * GoCC merges every entry of its config whose pattern matches a key, in file order: a number an
 * entry sets (not 0) replaces the one before, starting from the environment's
 * (limiter_manager.go, mergeConfigsForInstance). The quotas here decide each key with exactly those
 * numbers:
 * - a literal key's entries, and the regexes that match that key, are merged here once: one quota
 *   matching the key exactly;
 * - each regex entry is a quota whose `merge` names itself for the numbers it sets; the engine
 *   merges the regex entries that match a key, and takes the quota whose `merge` is the result;
 * - those results are made here in advance, every one a set of regex entries can give.
 */

export type GoccField = keyof GoccSettings;
const FIELDS: readonly GoccField[] = ['maxRequests', 'maxRequestsInQueue', 'windowMillis'];

/** One entry of GoCC's `keys`, as read. */
export interface GoccEntry {
  /** Its quota's name. */
  readonly name: string;
  /** Its quota's `match`. */
  readonly match: string;
  /** The key a literal pattern matches, normalised; undefined for a regex. */
  readonly literal: string | undefined;
  /** The numbers it sets: 0 or absent is unset, as Go's zero value. */
  readonly sets: Partial<GoccSettings>;
}

/** Merges of regex entries at most: a file whose regexes could combine more ways is refused. */
export const MAX_GOCC_MERGES = 1000;

/** For each number, the entry it comes from (its index). */
type Owners = Partial<Record<GoccField, number>>;

function settingsOf(
  owners: Owners,
  entries: readonly GoccEntry[],
  env: GoccSettings,
): GoccSettings {
  const settings = { ...env };
  for (const field of FIELDS) {
    const from = owners[field];
    if (from !== undefined) settings[field] = entries[from]!.sets[field]!;
  }
  return settings;
}

function laidOver(owners: Owners, entry: GoccEntry, index: number): Owners {
  const next = { ...owners };
  for (const field of FIELDS) if (entry.sets[field] !== undefined) next[field] = index;
  return next;
}

const ownersId = (owners: Owners): string => FIELDS.map((f) => owners[f] ?? '-').join(':');

function mergeRecord(owners: Owners, entries: readonly GoccEntry[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (const field of FIELDS) {
    const from = owners[field];
    if (from !== undefined) record[field] = entries[from]!.name;
  }
  return record;
}

/** FNV-1a, 32 bits, in hex: names for patterns that are not valid quota names. */
export function fnv1a32(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The quotas of GoCC's entries (the `default` quota aside), in file order, then the merges. */
export function goccQuotas(
  entries: readonly GoccEntry[],
  env: GoccSettings,
  issues: IssueList,
  path: readonly string[],
): QuotaSpec[] {
  const regexes = entries.flatMap((entry, index) =>
    entry.literal === undefined
      ? [{ index, regex: RE2JS.compile(entry.match.slice(REGEX_MATCH_PREFIX.length)) }]
      : [],
  );
  // Each literal key's entries, in file order: a key given twice merges both.
  const byLiteral = new Map<string, number[]>();
  entries.forEach(({ literal }, index) => {
    if (literal === undefined) return;
    const own = byLiteral.get(literal);
    if (own === undefined) byLiteral.set(literal, [index]);
    else own.push(index);
  });
  const quotas: QuotaSpec[] = [];
  entries.forEach((entry, index) => {
    const key = entry.literal;
    if (key === undefined) {
      const owners = laidOver({}, entry, index);
      quotas.push({
        ...goccQuota(entry.name, entry.match, settingsOf(owners, entries, env)),
        merge: mergeRecord(owners, entries),
      });
      return;
    }
    const own = byLiteral.get(key)!;
    if (own[0] !== index) return;
    // Every entry this key matches, in file order: its own, and each regex that matches it.
    const matching = [...own, ...regexes.filter((r) => r.regex.test(key)).map((r) => r.index)];
    let owners: Owners = {};
    for (const at of matching.sort((a, b) => a - b)) owners = laidOver(owners, entries[at]!, at);
    quotas.push(goccQuota(entry.name, entry.match, settingsOf(owners, entries, env)));
  });
  const merges = regexMerges(
    entries,
    regexes.map((r) => r.index),
    issues,
    path,
  );
  const names = new Set<string>();
  for (const owners of merges) {
    const record = mergeRecord(owners, entries);
    const hashed = `gocc:merged:fnv-${fnv1a32(JSON.stringify(record))}`;
    let name = hashed;
    for (let n = 2; names.has(name); n++) name = `${hashed}-${n}`;
    names.add(name);
    quotas.push({ ...goccQuota(name, undefined, settingsOf(owners, entries, env)), merge: record });
  }
  return quotas;
}

/**
 * Every result a set of regex entries can merge to that no single entry gives alone: each entry
 * laid, in file order, over every result of the entries before it. Any set is assumed possible
 * (whether two regexes can match one key is not decided here), so some results may serve no key.
 */
function regexMerges(
  entries: readonly GoccEntry[],
  regexes: readonly number[],
  issues: IssueList,
  path: readonly string[],
): Owners[] {
  const reached = new Map<string, Owners>([[ownersId({}), {}]]);
  for (const index of regexes) {
    for (const owners of [...reached.values()]) {
      const next = laidOver(owners, entries[index]!, index);
      reached.set(ownersId(next), next);
    }
    if (reached.size > MAX_GOCC_MERGES) {
      issues.add(
        path,
        `its regex key_patterns set different numbers in more than ${MAX_GOCC_MERGES} combinations; ` +
          'give each regex every number it needs',
      );
      return [];
    }
  }
  const alone = new Set(regexes.map((index) => ownersId(laidOver({}, entries[index]!, index))));
  return [...reached.entries()]
    .filter(([id, owners]) => !alone.has(id) && Object.keys(owners).length > 0)
    .map(([, owners]) => owners);
}
