import {
  BUILT_IN_PROVIDERS,
  DEFAULT_QUOTA_NAME,
  fieldValue,
  IssueList,
  isMapping,
  MS_PER_DAY,
  modelQuota,
  NAME_RULE,
  PROVIDER_DAY_TIMEZONE,
  PROVIDER_MINUTE_MS,
  readInteger,
  readMapping,
  refuseUnknownFields,
  requireField,
  type ConfigPath,
  type Mapping,
  type ModelProfile,
  isProviderName,
} from '@app/contracts';
import type { ImportPlan } from './import-plan';
import { formatInstant, isAfter, parseInstant, TIMESTAMP_RULE, type Instant } from './instant';

/**
 * go-ratelimit's `ratelimits.yaml` (github.com/dAppCore/go-ratelimit): its Config fields
 * (`backend`, `file_path`, `providers`, `quotas`) and the RateLimiter it persists (`quotas`,
 * `state`). Go's yaml.v3 would ignore unknown fields; an import refuses them instead, since a typo
 * (`max_rmp`) would otherwise import a model as unlimited.
 */

const TOP_LEVEL_FIELDS: ReadonlySet<string> = new Set([
  'backend',
  'file_path',
  'sqlite_path',
  'providers',
  'quotas',
  'state',
]);
/** go-ratelimit's storage settings: meaningless here. */
const STORAGE_FIELDS = ['backend', 'file_path', 'sqlite_path'] as const;
/** Any of these (or `quotas` as a mapping) marks a document as go-ratelimit's. */
export const GO_RATELIMIT_MARKERS = ['state', ...STORAGE_FIELDS] as const;
const QUOTA_FIELDS: ReadonlySet<string> = new Set(['max_rpm', 'max_tpm', 'max_rpd']);
const STATE_FIELDS: ReadonlySet<string> = new Set(['requests', 'tokens', 'day_start', 'day_count']);
const TOKEN_FIELDS: ReadonlySet<string> = new Set(['time', 'count']);
const MODEL_NAME_RULE = `is not a usable model name: it names the model's quota, which ${NAME_RULE.description}`;

/** Why the document is read as go-ratelimit's, for messages: "`quotas` is a mapping". */
export function goRatelimitMarker(root: Mapping): string | undefined {
  if (isMapping(fieldValue(root, 'quotas'))) return '`quotas` is a mapping of model names';
  const marker = GO_RATELIMIT_MARKERS.find((field) => fieldValue(root, field) !== undefined);
  return marker === undefined ? undefined : `it has \`${marker}:\``;
}

/** The built-in provider whose profile lists `model`. */
function builtInProviderOf(model: string): string | undefined {
  return BUILT_IN_PROVIDERS.find((profile) => profile.models.some((m) => m.model === model))?.name;
}

/** A section that may be left empty (`state:`): null reads as absent, as Go's yaml.v3 reads it. */
function section(mapping: Mapping, field: string): unknown {
  const value = fieldValue(mapping, field);
  return value === null ? undefined : value;
}

function entries(value: unknown, path: ConfigPath, issues: IssueList, what: string) {
  if (value === undefined) return [];
  if (!isMapping(value)) {
    issues.add(path, `must be a mapping of model names to ${what}`);
    return [];
  }
  return Object.entries(value);
}

function readProviders(root: Mapping, issues: IssueList): string[] {
  const value = section(root, 'providers');
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    issues.add(['providers'], 'must be a list of provider names, e.g. [gemini, openai]');
    return [];
  }
  const names: string[] = [];
  value.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || !isProviderName(name)) {
      issues.add(
        ['providers', index],
        'must be a provider name: a lowercase word [a-z][a-z0-9_-]*',
      );
    } else if (!names.includes(name)) {
      names.push(name);
    }
  });
  return names;
}

function readModelName(model: string, path: ConfigPath, issues: IssueList): void {
  if (!NAME_RULE.test(model)) issues.add(path, MODEL_NAME_RULE);
  else if (model === DEFAULT_QUOTA_NAME) {
    issues.add(path, 'names the default quota, which serves every other key: not a model');
  }
}

function readQuotas(root: Mapping, readAs: string, issues: IssueList): ModelProfile[] {
  const profiles: ModelProfile[] = [];
  const listed = entries(
    section(root, 'quotas'),
    ['quotas'],
    issues,
    `{ max_rpm, max_tpm, max_rpd } (${readAs})`,
  );
  for (const [model, value] of listed) {
    const path = ['quotas', model];
    const before = issues.count;
    readModelName(model, path, issues);
    const mapping = readMapping(
      value,
      path,
      issues,
      'max_rpm, max_tpm, max_rpd; 0 or omitted is unlimited',
    );
    if (mapping === undefined) continue;
    refuseUnknownFields(mapping, QUOTA_FIELDS, path, issues);
    const maxRpm = readInteger(mapping, 'max_rpm', path, issues, { min: 0 }) ?? 0;
    const maxTpm = readInteger(mapping, 'max_tpm', path, issues, { min: 0 }) ?? 0;
    const maxRpd = readInteger(mapping, 'max_rpd', path, issues, { min: 0 }) ?? 0;
    if (issues.count === before) profiles.push({ model, maxRpm, maxTpm, maxRpd });
  }
  return profiles;
}

interface ModelState {
  readonly model: string;
  readonly requests: readonly Instant[];
  readonly tokens: readonly { readonly time: Instant; readonly count: number }[];
  readonly dayStart: Instant | undefined;
  readonly dayCount: number;
}

function readInstant(value: unknown, path: ConfigPath, issues: IssueList): Instant | undefined {
  return parseInstant(value) ?? issues.add(path, TIMESTAMP_RULE);
}

function readList(mapping: Mapping, field: string, path: ConfigPath, issues: IssueList): unknown[] {
  const value = section(mapping, field);
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  issues.add(
    [...path, field],
    field === 'requests'
      ? 'must be a list of timestamps'
      : 'must be a list of { time: <timestamp>, count: <tokens> }',
  );
  return [];
}

function readTokenEntry(
  value: unknown,
  path: ConfigPath,
  issues: IssueList,
): { time: Instant; count: number } | undefined {
  const mapping = readMapping(value, path, issues, 'time, count');
  if (mapping === undefined) return undefined;
  refuseUnknownFields(mapping, TOKEN_FIELDS, path, issues);
  const hasTime = requireField(mapping, 'time', path, issues);
  const hasCount = requireField(mapping, 'count', path, issues);
  const time = hasTime
    ? readInstant(fieldValue(mapping, 'time'), [...path, 'time'], issues)
    : undefined;
  const count = hasCount ? readInteger(mapping, 'count', path, issues, { min: 0 }) : undefined;
  return time === undefined || count === undefined ? undefined : { time, count };
}

function readModelState(model: string, value: unknown, issues: IssueList): ModelState | undefined {
  const path = ['state', model];
  const before = issues.count;
  readModelName(model, path, issues);
  if (value === null) return undefined;
  const mapping = readMapping(value, path, issues, 'requests, tokens, day_start, day_count');
  if (mapping === undefined) return undefined;
  refuseUnknownFields(mapping, STATE_FIELDS, path, issues);
  const requests: Instant[] = [];
  readList(mapping, 'requests', path, issues).forEach((item, index) => {
    const instant = readInstant(item, [...path, 'requests', index], issues);
    if (instant !== undefined) requests.push(instant);
  });
  const tokens: { time: Instant; count: number }[] = [];
  readList(mapping, 'tokens', path, issues).forEach((item, index) => {
    const entry = readTokenEntry(item, [...path, 'tokens', index], issues);
    if (entry !== undefined) tokens.push(entry);
  });
  const rawDayStart = fieldValue(mapping, 'day_start');
  const dayStart =
    rawDayStart === undefined
      ? undefined
      : readInstant(rawDayStart, [...path, 'day_start'], issues);
  const dayCount = readInteger(mapping, 'day_count', path, issues, { min: 0 }) ?? 0;
  return issues.count === before ? { model, requests, tokens, dayStart, dayCount } : undefined;
}

function readState(root: Mapping, issues: IssueList): ModelState[] {
  const states: ModelState[] = [];
  const listed = entries(
    section(root, 'state'),
    ['state'],
    issues,
    '{ requests, tokens, day_start, day_count }',
  );
  for (const [model, value] of listed) {
    const state = readModelState(model, value, issues);
    if (state !== undefined) states.push(state);
  }
  return states;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** What one model's state amounts to at `now`. */
interface Usage {
  /** Request instants within the minute before `now`, those in the future included. */
  readonly requests: number;
  /** Token counts within that minute; may exceed 2^53 - 1 (refused). */
  readonly tokens: number;
  readonly futureRequests: number;
  readonly futureTokens: number;
  readonly futureDayStart: boolean;
  /** day_count when day_start lies within the 24 h before `now` (else go-ratelimit reset it). */
  readonly dayCount: number;
}

function usageOf(state: ModelState, now: number): Usage {
  const minuteStart = now - PROVIDER_MINUTE_MS;
  let requests = 0;
  let futureRequests = 0;
  for (const instant of state.requests) {
    if (isAfter(instant, now)) futureRequests += 1;
    if (isAfter(instant, minuteStart)) requests += 1;
  }
  let tokens = 0;
  let futureTokens = 0;
  for (const entry of state.tokens) {
    if (isAfter(entry.time, now)) futureTokens += 1;
    if (isAfter(entry.time, minuteStart)) tokens += entry.count;
  }
  const { dayStart } = state;
  const inDay = dayStart !== undefined && isAfter(dayStart, now - MS_PER_DAY);
  return {
    requests,
    tokens,
    futureRequests,
    futureTokens,
    futureDayStart: dayStart !== undefined && isAfter(dayStart, now),
    dayCount: inDay ? state.dayCount : 0,
  };
}

function listed(items: readonly string[], most = 10): string {
  const more = items.length > most ? ` and ${items.length - most} more` : '';
  return `${items.slice(0, most).join(', ')}${more}`;
}

/** What an operator should know about the usage carried over for one model. */
function usageNotes(state: ModelState, usage: Usage): string[] {
  const notes: string[] = [];
  const future = [
    usage.futureRequests > 0 && plural(usage.futureRequests, 'request time'),
    usage.futureTokens > 0 && plural(usage.futureTokens, 'token entry', 'token entries'),
    usage.futureDayStart && 'day_start',
  ].filter((part) => part !== false);
  if (future.length > 0) {
    const parts =
      future.length === 1
        ? future.join('')
        : `${future.slice(0, -1).join(', ')} and ${future.at(-1)}`;
    const single =
      future.length === 1 &&
      (usage.futureDayStart || usage.futureRequests + usage.futureTokens === 1);
    notes.push(
      `${state.model}: ${parts} ${single ? 'is' : 'are'} later than the time of the import ` +
        '(is a clock ahead?); counted as made at the import.',
    );
  }
  const { dayCount, requests } = usage;
  if (dayCount > requests) {
    const since =
      state.dayStart === undefined || usage.futureDayStart
        ? 'today'
        : `since ${formatInstant(state.dayStart)}`;
    notes.push(
      `${state.model}: go-ratelimit counted ${plural(dayCount, 'request')} in its day (${since}); ` +
        `only the ${plural(requests, 'request')} of the last minute ${requests === 1 ? 'was' : 'were'} carried over, ` +
        `so ${dayCount - requests} of the day's requests are not charged to rpd here ` +
        `(recording them would also charge rpm, which counts the same requests).`,
    );
  }
  return notes;
}

/**
 * Each quota is a model. A model of a built-in provider profile goes to `models` (the admin edits
 * the profile) and its provider is enabled, since go-ratelimit enforces every quota in its file
 * (a file written by go-ratelimit has `quotas` and `state` but no `providers`); any other model
 * becomes a quota of its own through modelQuota. State becomes usage on (quota M, key M).
 */
export function readGoRatelimit(
  root: Mapping,
  why: string,
  now: number,
  issues: IssueList,
): ImportPlan {
  const notes: string[] = [];
  const readAs = `the document is read as go-ratelimit's ratelimits.yaml because ${why}`;
  for (const field of Object.keys(root)) {
    if (TOP_LEVEL_FIELDS.has(field)) continue;
    const expected = [...TOP_LEVEL_FIELDS].join(', ');
    issues.add([field], `is not a known field (${readAs}; expected one of: ${expected})`);
  }
  const explicitProviders = readProviders(root, issues);
  const profiles = readQuotas(root, readAs, issues);
  const states = readState(root, issues);

  const quotas = profiles
    .filter((profile) => builtInProviderOf(profile.model) === undefined)
    .map((profile) => modelQuota(profile));
  const models: ImportPlan['models'] = [];
  const implied = new Map<string, string[]>();
  for (const profile of profiles) {
    const provider = builtInProviderOf(profile.model);
    if (provider === undefined) continue;
    models.push({ provider, model: profile });
    if (explicitProviders.includes(provider)) continue;
    implied.set(provider, [...(implied.get(provider) ?? []), profile.model]);
  }
  const enableProviders = [...explicitProviders, ...implied.keys()];

  const storage = STORAGE_FIELDS.filter((field) => fieldValue(root, field) !== undefined);
  if (storage.length > 0) {
    notes.push(
      `${storage.map((field) => `\`${field}\``).join(', ')}: go-ratelimit's storage ${storage.length === 1 ? 'setting was' : 'settings were'} ignored.`,
    );
  }
  for (const name of explicitProviders) {
    if (!BUILT_IN_PROVIDERS.some((profile) => profile.name === name)) {
      notes.push(
        `Provider ${name} has no built-in profile (go-ratelimit ignores it too); it is enabled without models.`,
      );
    }
  }
  for (const [provider, names] of implied) {
    const all = BUILT_IN_PROVIDERS.find((profile) => profile.name === provider)?.models ?? [];
    const others = all.filter((model) => !names.includes(model.model)).length;
    notes.push(
      `Provider ${provider} is enabled because the document sets limits for ${names.length === 1 ? 'its model' : 'its models'} ` +
        `${names.join(', ')} (go-ratelimit enforces every quota in its file)` +
        (others > 0
          ? `; its ${plural(others, 'other model')} get${others === 1 ? 's' : ''} the built-in limits.`
          : '.'),
    );
  }

  // The quotas that will exist once the plan is applied: usage for any other model has no quota
  // to be charged to (go-ratelimit lets models without a quota through unlimited).
  const served = new Set<string>([
    ...profiles.map((profile) => profile.model),
    ...BUILT_IN_PROVIDERS.filter((profile) => enableProviders.includes(profile.name)).flatMap(
      (profile) => profile.models.map((model) => model.model),
    ),
  ]);
  const usage: ImportPlan['usage'] = [];
  const unserved: string[] = [];
  let dayCounted = false;
  for (const state of states) {
    const counted = usageOf(state, now);
    if (!Number.isSafeInteger(counted.tokens)) {
      issues.add(
        ['state', state.model, 'tokens'],
        'add up to more than 2^53 - 1 within the last minute',
      );
      continue;
    }
    const { requests, tokens } = counted;
    if (!served.has(state.model)) {
      if (requests > 0 || tokens > 0 || counted.dayCount > 0) unserved.push(state.model);
      continue;
    }
    notes.push(...usageNotes(state, counted));
    dayCounted ||= counted.dayCount > 0;
    if (requests > 0 || tokens > 0) {
      usage.push({ quota: state.model, key: state.model, cost: { requests, tokens } });
    }
  }
  if (unserved.length > 0) {
    const one = unserved.length === 1;
    notes.push(
      `The recent usage of ${listed(unserved)} was not carried over: the document sets no quota for ` +
        `${one ? 'that model' : 'those models'} and ${one ? 'it is' : 'they are'} not in an enabled ` +
        `provider (go-ratelimit does not limit ${one ? 'it' : 'them'} either).`,
    );
  }
  if (dayCounted || profiles.some((profile) => profile.maxRpd > 0)) {
    notes.push(
      `go-ratelimit counts requests per day over a rolling 24 h from day_start; here a model's rpd ` +
        `(max_rpd) resets at midnight ${PROVIDER_DAY_TIMEZONE}, as the providers reset it, so a day's ` +
        `budget frees up at a different time than it did in go-ratelimit.`,
    );
  }
  return { source: 'go-ratelimit', quotas, enableProviders, models, usage, notes };
}
