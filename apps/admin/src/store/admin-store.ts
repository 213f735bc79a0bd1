import type {
  ControlProvider,
  ControlQuota,
  ControlSet,
  ModelProfile,
  QuotaSpec,
} from '@app/contracts';
import type { EntityManager } from '@mikro-orm/better-sqlite';
import { QueryOrder, UniqueConstraintViolationException } from '@mikro-orm/core';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { STORE_CLOCK, type StoreClock } from './clock';
import { AuditRow, ModelQuotaRow, ProviderRow, QuotaRow } from './entities';
import { MatchTakenError, type MatchConflict } from './match-taken-error';
import type { StoreOrm } from './orm-config';

/** Injection token of the opened, migrated and seeded ORM (see StoreModule). */
export const STORE_ORM = Symbol('StoreOrm');

/** One row of the audit log. `before`/`after` are null for a creation/deletion. */
export interface AuditEntry {
  readonly id: number;
  /** Epoch ms. */
  readonly at: number;
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  readonly before: unknown;
  readonly after: unknown;
  /** importConfig entries: the summary the caller gave; absent elsewhere. */
  readonly detail?: string;
}

/** The result of one change. `changed: false`: the value was already so; nothing was written. */
export interface Change<T> {
  readonly before?: T;
  readonly after: T;
  readonly changed: boolean;
}

export interface ImportInput {
  readonly quotas: readonly QuotaSpec[];
  /** Providers to enable (an unknown name is created with no models). */
  readonly enableProviders: readonly string[];
  /** Model limits to set (a missing provider is created disabled, a missing model added). */
  readonly models: readonly { readonly provider: string; readonly model: ModelProfile }[];
}

export interface ImportResult {
  /** Only the quotas the import changed, as they are now, in input order. */
  readonly changedQuotas: ControlQuota[];
  /** Only the providers the import changed, as they are now. */
  readonly changedProviders: ControlProvider[];
}

/** A page of quotas by name: the first `first` (all when absent) named after `after`. */
export interface QuotaPage {
  readonly first?: number;
  readonly after?: string;
}

/**
 * How many elements the list reads can answer at most, kept in memory so that a query's cost
 * can be known before it runs (see apps/admin/src/graphql/query-cost.ts). Counts are exact after
 * every write; the two maxima are upper bounds (exact at start, raised by writes, lowered only
 * by the next start).
 */
export interface StoreSizes {
  readonly quotas: number;
  readonly limitsPerQuota: number;
  readonly providers: number;
  readonly modelsPerProvider: number;
}

/** Audit actions written by the store itself. */
export const AUDIT_ACTIONS = {
  upsertQuota: 'upsertQuota',
  deleteQuota: 'deleteQuota',
  setProviderEnabled: 'setProviderEnabled',
  setModelQuota: 'setModelQuota',
  importConfig: 'importConfig',
} as const;

interface AuditInput {
  readonly at: number;
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  /** undefined: stored as NULL (nothing before / after). */
  readonly before: unknown;
  readonly after: unknown;
  readonly detail?: string;
}

/** JSON with object keys sorted, so two equal values compare equal whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

type QuotaColumns = Pick<QuotaRow, 'spec' | 'version' | 'updatedAt'>;

function toQuota(row: QuotaColumns): ControlQuota {
  return {
    spec: JSON.parse(row.spec) as QuotaSpec,
    version: row.version,
    updatedAt: row.updatedAt,
  };
}

function toModel(row: ModelQuotaRow): ModelProfile {
  return { model: row.model, maxRpm: row.maxRpm, maxTpm: row.maxTpm, maxRpd: row.maxRpd };
}

function toProvider(row: ProviderRow, models: readonly ModelQuotaRow[]): ControlProvider {
  return {
    name: row.name,
    enabled: row.enabled,
    models: models
      .filter((m) => m.provider === row.name)
      .map(toModel)
      .sort((a, b) => byString(a.model, b.model)),
  };
}

/**
 * The imported quotas (`specs`, by name) whose pattern a stored quota the import leaves alone
 * has, or an imported quota named earlier has.
 */
function matchConflicts(
  rows: ReadonlyMap<string, QuotaRow>,
  specs: ReadonlyMap<string, QuotaSpec>,
): MatchConflict[] {
  const owners = new Map<string, string>();
  for (const row of rows.values()) {
    if (row.match !== null && !specs.has(row.name)) owners.set(row.match, row.name);
  }
  const conflicts: MatchConflict[] = [];
  for (const spec of specs.values()) {
    if (spec.match === undefined) continue;
    const owner = owners.get(spec.match);
    if (owner === undefined) owners.set(spec.match, spec.name);
    else conflicts.push({ quota: spec.name, match: spec.match, owner });
  }
  return conflicts;
}

function parseJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

/**
 * The admin's persistent state: quotas, provider profiles and the audit log, in SQLite.
 *
 * A singleton used by concurrent requests: every call works in its own EntityManager fork and
 * its own transaction (reads too, so a multi-table read is one snapshot), and every change is
 * written in the same transaction as its audit entry. Knex keeps a single SQLite connection,
 * so transactions of this process run one after the other instead of meeting SQLITE_BUSY.
 */
@Injectable()
export class AdminStore implements OnModuleInit {
  private sizes: StoreSizes = { quotas: 0, limitsPerQuota: 0, providers: 0, modelsPerProvider: 0 };

  constructor(
    @Inject(STORE_ORM) private readonly orm: StoreOrm,
    @Inject(STORE_CLOCK) private readonly clock: StoreClock,
  ) {}

  async onModuleInit(): Promise<void> {
    this.sizes = await this.transaction(async (em) => {
      const [row] = await em.execute<{ most: number | null }[]>(
        "select max(json_array_length(`spec`, '$.limits')) as `most` from `quotas`",
      );
      return { ...(await this.counts(em)), limitsPerQuota: row?.most ?? 0 };
    });
  }

  /** What the list reads can answer at most, now (no I/O). */
  listSizes(): StoreSizes {
    return this.sizes;
  }

  /** Sorted by name; `page` narrows them (all by default). */
  quotas(page: QuotaPage = {}): Promise<ControlQuota[]> {
    return this.transaction((em) => this.readQuotas(em, page));
  }

  quota(name: string): Promise<ControlQuota | undefined> {
    return this.transaction(async (em) => {
      const row = await em.findOne(QuotaRow, { name });
      return row === null ? undefined : toQuota(row);
    });
  }

  /** Sorted by name, each provider's models sorted by model. */
  providers(): Promise<ControlProvider[]> {
    return this.transaction((em) => this.readProviders(em));
  }

  provider(name: string): Promise<ControlProvider | undefined> {
    return this.transaction((em) => this.readProvider(em, name));
  }

  /** Everything the limiters need, read in one transaction. */
  controlSet(): Promise<ControlSet> {
    return this.transaction(async (em) => ({
      quotas: await this.readQuotas(em),
      providers: await this.readProviders(em),
    }));
  }

  /**
   * Creates (version 1) or replaces (version + 1) the quota `spec.name`; updatedAt = now.
   * A spec equal to the stored one (key order aside) changes nothing and writes no audit entry.
   * Throws MatchTakenError, writing nothing, when another quota has `spec.match`: the check and
   * the write are one transaction, so two writers of one pattern cannot both pass it.
   */
  saveQuota(spec: QuotaSpec, actor: string): Promise<Change<ControlQuota>> {
    return this.sizing([spec], async (em) => {
      if (spec.match !== undefined) {
        const owner = await em.findOne(QuotaRow, { match: spec.match, name: { $ne: spec.name } });
        if (owner !== null) {
          throw new MatchTakenError([{ quota: spec.name, match: spec.match, owner: owner.name }]);
        }
      }
      const now = this.clock.now();
      const change = await this.putQuota(em, spec, now);
      if (change.changed) {
        this.audit(em, {
          at: now,
          actor,
          action: AUDIT_ACTIONS.upsertQuota,
          target: spec.name,
          before: change.before,
          after: change.after,
        });
      }
      return change;
    });
  }

  /** Answers the deleted quota, or undefined (and no audit entry) when there was none. */
  deleteQuota(name: string, actor: string): Promise<ControlQuota | undefined> {
    return this.sizing([], async (em) => {
      const row = await em.findOne(QuotaRow, { name });
      if (row === null) return undefined;
      const before = toQuota(row);
      em.remove(row);
      this.audit(em, {
        at: this.clock.now(),
        actor,
        action: AUDIT_ACTIONS.deleteQuota,
        target: name,
        before,
        after: undefined,
      });
      return before;
    });
  }

  /**
   * An unknown name creates the provider, with no models (docs/contract.md, Concepts: "or any new
   * name").
   */
  setProviderEnabled(
    name: string,
    enabled: boolean,
    actor: string,
  ): Promise<Change<ControlProvider>> {
    return this.sizing([], async (em) => {
      const change = await this.putProvider(em, name, enabled, []);
      if (change.changed) {
        const now = this.clock.now();
        this.audit(em, {
          at: now,
          actor,
          action: AUDIT_ACTIONS.setProviderEnabled,
          target: name,
          before: change.before,
          after: change.after,
        });
      }
      return change;
    });
  }

  /** Sets one model's limits; creates the provider (disabled) and/or the model when missing. */
  setModelQuota(
    provider: string,
    model: ModelProfile,
    actor: string,
  ): Promise<Change<ControlProvider>> {
    return this.sizing([], async (em) => {
      const change = await this.putProvider(em, provider, undefined, [model]);
      if (change.changed) {
        const now = this.clock.now();
        this.audit(em, {
          at: now,
          actor,
          action: AUDIT_ACTIONS.setModelQuota,
          target: provider,
          before: change.before,
          after: change.after,
        });
      }
      return change;
    });
  }

  /**
   * Applies a whole imported config in ONE transaction: all of it, or (on any error) none of it.
   * A quota named twice takes its last spec; a model named twice its last limits. Writes exactly
   * one audit entry (action importConfig, target the quota's or provider's name, before/after,
   * detail = summary) per quota or provider whose value changed, and nothing else.
   * Throws MatchTakenError, writing nothing, when an imported quota would take the match pattern
   * of a quota the import leaves alone (checked in the writing transaction, as saveQuota does).
   */
  importAll(input: ImportInput, actor: string, summary: string): Promise<ImportResult> {
    return this.sizing(input.quotas, async (em) => {
      const now = this.clock.now();
      const changedQuotas: ControlQuota[] = [];
      const changedProviders: ControlProvider[] = [];

      const specs = new Map<string, QuotaSpec>();
      for (const spec of input.quotas) specs.set(spec.name, spec);
      // One read and one flush for all quotas: a query or flush per quota would compute the
      // change set of every entity loaded so far, O(n^2) (5000 quotas took minutes).
      const rows = new Map((await em.find(QuotaRow, {})).map((row) => [row.name, row]));
      const conflicts = matchConflicts(rows, specs);
      if (conflicts.length > 0) throw new MatchTakenError(conflicts);
      // The index is checked row by row: patterns moving between imported quotas (a swap) are
      // released first, so no row meets the pattern it takes still held by another.
      let released = false;
      for (const spec of specs.values()) {
        const row = rows.get(spec.name);
        if (row === undefined || row.match === null || row.match === (spec.match ?? null)) continue;
        row.match = null;
        released = true;
      }
      if (released) await em.flush();
      for (const spec of specs.values()) {
        const change = this.applyQuota(em, rows.get(spec.name) ?? null, spec, now);
        if (!change.changed) continue;
        this.audit(em, {
          at: now,
          actor,
          action: AUDIT_ACTIONS.importConfig,
          target: spec.name,
          before: change.before,
          after: change.after,
          detail: summary,
        });
        changedQuotas.push(change.after);
      }
      await em.flush();

      const touched = new Map<string, { enable: boolean; models: Map<string, ModelProfile> }>();
      const entry = (name: string) => {
        let found = touched.get(name);
        if (found === undefined) {
          found = { enable: false, models: new Map() };
          touched.set(name, found);
        }
        return found;
      };
      for (const name of input.enableProviders) entry(name).enable = true;
      for (const { provider, model } of input.models) {
        entry(provider).models.set(model.model, model);
      }
      for (const [name, { enable, models }] of touched) {
        const change = await this.putProvider(em, name, enable ? true : undefined, [
          ...models.values(),
        ]);
        if (!change.changed) continue;
        this.audit(em, {
          at: now,
          actor,
          action: AUDIT_ACTIONS.importConfig,
          target: name,
          before: change.before,
          after: change.after,
          detail: summary,
        });
        await em.flush();
        changedProviders.push(change.after);
      }
      return { changedQuotas, changedProviders };
    });
  }

  /** An audit entry for an action that changes no row (resetKey). */
  record(
    actor: string,
    action: string,
    target: string,
    before: unknown,
    after: unknown,
  ): Promise<void> {
    return this.transaction(async (em) => {
      this.audit(em, { at: this.clock.now(), actor, action, target, before, after });
      await em.flush();
    });
  }

  /** The newest `limit` entries, newest first (limit is floored; below 1 answers none). */
  auditLog(limit: number): Promise<AuditEntry[]> {
    const count = Number.isFinite(limit) ? Math.floor(limit) : 0;
    if (count < 1) return Promise.resolve([]);
    return this.transaction(async (em) => {
      const rows = await em.find(AuditRow, {}, { orderBy: { id: 'DESC' }, limit: count });
      return rows.map((row) => ({
        id: row.id,
        at: row.at,
        actor: row.actor,
        action: row.action,
        target: row.target,
        before: parseJson(row.before),
        after: parseJson(row.after),
        ...(row.detail === null ? {} : { detail: row.detail }),
      }));
    });
  }

  /**
   * A fresh fork per call (never a shared identity map) and one transaction around `work`.
   * The unique index on quotas.match refusing a row (a writer this process does not see, such
   * as a second admin on the same file) is a MatchTakenError too.
   */
  private async transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.orm.em.fork().transactional((em) => work(em));
    } catch (error) {
      if (
        error instanceof UniqueConstraintViolationException &&
        /quotas\.match/.test(error.message)
      ) {
        throw new MatchTakenError([]);
      }
      throw error;
    }
  }

  /**
   * A write, then the sizes it leaves (`specs`: the quotas it may have written). The counts are
   * read in the writing transaction and kept once it has committed.
   */
  private async sizing<T>(
    specs: readonly QuotaSpec[],
    work: (em: EntityManager) => Promise<T>,
  ): Promise<T> {
    const { result, counts } = await this.transaction(async (em) => {
      const done = await work(em);
      await em.flush();
      return { result: done, counts: await this.counts(em) };
    });
    let limitsPerQuota = this.sizes.limitsPerQuota;
    for (const spec of specs) limitsPerQuota = Math.max(limitsPerQuota, spec.limits.length);
    this.sizes = { ...counts, limitsPerQuota };
    return result;
  }

  /** Three reads of an index or a small table each. */
  private async counts(em: EntityManager): Promise<Omit<StoreSizes, 'limitsPerQuota'>> {
    // em.execute: in the transaction's connection (the pool has one; another would wait forever).
    const [row] = await em.execute<{ quotas: number; providers: number; models: number | null }[]>(
      'select (select count(*) from `quotas`) as `quotas`, ' +
        '(select count(*) from `providers`) as `providers`, ' +
        '(select max(`n`) from (select count(*) as `n` from `model_quotas` group by `provider`)) as `models`',
    );
    return {
      quotas: row?.quotas ?? 0,
      providers: row?.providers ?? 0,
      modelsPerProvider: row?.models ?? 0,
    };
  }

  /**
   * Plain rows, not entities: tracking 20 000 entities in an identity map costs several times
   * the read itself, and nothing here changes them.
   */
  private async readQuotas(em: EntityManager, page: QuotaPage = {}): Promise<ControlQuota[]> {
    const query = em
      .createQueryBuilder(QuotaRow)
      .select(['spec', 'version', 'updatedAt'])
      .orderBy({ name: QueryOrder.ASC });
    if (page.after !== undefined) query.where({ name: { $gt: page.after } });
    if (page.first !== undefined) query.limit(page.first);
    const rows = await query.execute<QuotaColumns[]>('all');
    return rows.map(toQuota);
  }

  private async readProviders(em: EntityManager): Promise<ControlProvider[]> {
    const rows = await em.find(ProviderRow, {});
    const models = await em.find(ModelQuotaRow, {});
    return rows.sort((a, b) => byString(a.name, b.name)).map((row) => toProvider(row, models));
  }

  private async readProvider(
    em: EntityManager,
    name: string,
  ): Promise<ControlProvider | undefined> {
    const row = await em.findOne(ProviderRow, { name });
    if (row === null) return undefined;
    return toProvider(row, await em.find(ModelQuotaRow, { provider: name }));
  }

  private async putQuota(
    em: EntityManager,
    spec: QuotaSpec,
    now: number,
  ): Promise<Change<ControlQuota>> {
    return this.applyQuota(em, await em.findOne(QuotaRow, { name: spec.name }), spec, now);
  }

  /** Creates or updates the quota's row (`row`: its current one, if any); flushes nothing. */
  private applyQuota(
    em: EntityManager,
    row: QuotaRow | null,
    spec: QuotaSpec,
    now: number,
  ): Change<ControlQuota> {
    const json = JSON.stringify(spec);
    const match = spec.match ?? null;
    if (row === null) {
      const created = em.create(QuotaRow, {
        name: spec.name,
        spec: json,
        match,
        version: 1,
        updatedAt: now,
      });
      return { after: toQuota(created), changed: true };
    }
    const before = toQuota(row);
    // Also when nothing else changes: a row whose pattern the migration gave to another quota (a
    // duplicate from before the column) takes it back once it is free.
    row.match = match;
    if (canonicalJson(before.spec) === canonicalJson(JSON.parse(json))) {
      return { before, after: before, changed: false };
    }
    row.spec = json;
    row.version = before.version + 1;
    row.updatedAt = now;
    return { before, after: toQuota(row), changed: true };
  }

  /**
   * Creates the provider when missing (disabled unless `enabled` says otherwise), sets `enabled`
   * when given and upserts `models`; answers the provider before and after.
   */
  private async putProvider(
    em: EntityManager,
    name: string,
    enabled: boolean | undefined,
    models: readonly ModelProfile[],
  ): Promise<Change<ControlProvider>> {
    const before = await this.readProvider(em, name);
    let row = await em.findOne(ProviderRow, { name });
    if (row === null) row = em.create(ProviderRow, { name, enabled: enabled ?? false });
    else if (enabled !== undefined) row.enabled = enabled;
    for (const model of models) {
      const existing = await em.findOne(ModelQuotaRow, { provider: name, model: model.model });
      if (existing === null) {
        em.create(ModelQuotaRow, {
          provider: name,
          model: model.model,
          maxRpm: model.maxRpm,
          maxTpm: model.maxTpm,
          maxRpd: model.maxRpd,
        });
      } else {
        existing.maxRpm = model.maxRpm;
        existing.maxTpm = model.maxTpm;
        existing.maxRpd = model.maxRpd;
      }
    }
    const after = toProvider(row, await em.find(ModelQuotaRow, { provider: name }));
    const changed = before === undefined || canonicalJson(before) !== canonicalJson(after);
    return { before, after, changed };
  }

  private audit(em: EntityManager, entry: AuditInput): void {
    em.create(AuditRow, {
      at: entry.at,
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      before: entry.before === undefined ? null : JSON.stringify(entry.before),
      after: entry.after === undefined ? null : JSON.stringify(entry.after),
      detail: entry.detail ?? null,
    });
  }
}
