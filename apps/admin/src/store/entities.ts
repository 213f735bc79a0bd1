import { Entity, PrimaryKey, PrimaryKeyProp, Property, Unique } from '@mikro-orm/core';

/*
 * The admin's tables. Every column names its type in the decorator: the bundle (webpack) and the
 * tests (swc) must not depend on design:type metadata, and epoch ms fit SQLite's 64-bit INTEGER
 * (read back as JS numbers, exact up to 2^53).
 */

/** One admin-managed quota: the QuotaSpec as JSON text, its version and last change. */
@Entity({ tableName: 'quotas' })
export class QuotaRow {
  @PrimaryKey({ type: 'string' })
  name!: string;

  /** JSON of a QuotaSpec (from '@app/contracts'). */
  @Property({ type: 'text' })
  spec!: string;

  /**
   * The spec's `match`, NULL when it has none. Unique: two quotas with one pattern would make
   * every limiter refuse the whole control set, so the database refuses the second one whatever
   * the path that writes it.
   */
  @Property({ type: 'text', nullable: true })
  @Unique({ name: 'quotas_match_unique' })
  match: string | null = null;

  /** 1 on creation, +1 on every change. */
  @Property({ type: 'integer' })
  version!: number;

  /** Epoch ms of the last change. */
  @Property({ type: 'integer' })
  updatedAt!: number;
}

/** A provider profile's switch; its models live in ModelQuotaRow. */
@Entity({ tableName: 'providers' })
export class ProviderRow {
  @PrimaryKey({ type: 'string' })
  name!: string;

  @Property({ type: 'boolean' })
  enabled!: boolean;
}

/** One model's limits under a provider (0 = unlimited). */
@Entity({ tableName: 'model_quotas' })
export class ModelQuotaRow {
  [PrimaryKeyProp]?: ['provider', 'model'];

  @PrimaryKey({ type: 'string' })
  provider!: string;

  @PrimaryKey({ type: 'string' })
  model!: string;

  @Property({ type: 'integer' })
  maxRpm!: number;

  @Property({ type: 'integer' })
  maxTpm!: number;

  @Property({ type: 'integer' })
  maxRpd!: number;
}

/** Who changed what, when, from what to what. */
@Entity({ tableName: 'audit_entries' })
export class AuditRow {
  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  /** Epoch ms. */
  @Property({ type: 'integer' })
  at!: number;

  @Property({ type: 'string' })
  actor!: string;

  @Property({ type: 'string' })
  action!: string;

  @Property({ type: 'string' })
  target!: string;

  /** JSON, or NULL when there was nothing before (a creation). */
  @Property({ type: 'text', nullable: true })
  before: string | null = null;

  /** JSON, or NULL when there is nothing after (a deletion). */
  @Property({ type: 'text', nullable: true })
  after: string | null = null;

  /** Free text about the operation as a whole (importConfig: the caller's summary). */
  @Property({ type: 'text', nullable: true })
  detail: string | null = null;
}

/**
 * The seeding ledger: one row per built-in provider (model = '') and per built-in model that has
 * ever been seeded into this database. Seeding skips every name found here, so a provider or
 * model an operator edited or deleted never comes back on restart (see seed.ts).
 */
@Entity({ tableName: 'builtin_seeds' })
export class BuiltInSeedRow {
  [PrimaryKeyProp]?: ['provider', 'model'];

  @PrimaryKey({ type: 'string' })
  provider!: string;

  /** '' for the provider itself. */
  @PrimaryKey({ type: 'string' })
  model!: string;

  /** Epoch ms. */
  @Property({ type: 'integer' })
  seededAt!: number;
}

/** The explicit entity list (no folder discovery: the admin is bundled by webpack). */
export const STORE_ENTITIES = [QuotaRow, ProviderRow, ModelQuotaRow, AuditRow, BuiltInSeedRow];
