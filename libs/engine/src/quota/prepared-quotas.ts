import { InvalidQuotaError } from '../errors';
import type { QuotaSpec } from '../types';
import { compileQuota, type CompiledQuota } from './compile';
import { QuotaResolver, QuotaResolverBuilder } from './resolver';

/** A quota set compiled and indexed, ready to be put in force (Engine.commitQuotas). */
export interface ReadyQuotas {
  /** Every quota of the set, in definition order. */
  readonly compiled: readonly CompiledQuota[];
  readonly names: ReadonlySet<string>;
  readonly resolver: QuotaResolver;
  /** The resolver in force when the set was prepared: what `changed` and `removed` are against. */
  readonly base: QuotaResolver;
  /** The quotas compiled anew for a name the base has: [the base's, the new one]. */
  readonly changed: readonly (readonly [CompiledQuota, CompiledQuota])[];
  /** The base's quotas the set does not have. */
  readonly removed: readonly CompiledQuota[];
  /** The engine's next table number once the set's new quotas have theirs. */
  readonly nextTable: number;
}

/**
 * A quota set on its way into force (Engine.prepareQuotas): validated, compiled and indexed in
 * steps of bounded work (`step`), which a host runs between requests; Engine.commitQuotas then
 * puts it in force at once. A quota whose spec equals the one in force keeps its compiled form,
 * so putting it in force costs nothing. Nothing here touches the engine's state.
 */
export class PreparedQuotas {
  private readonly compiled: CompiledQuota[] = [];
  private readonly changed: [CompiledQuota, CompiledQuota][] = [];
  private readonly names = new Set<string>();
  private nextTable: number;
  private readonly builder: QuotaResolverBuilder;
  private readonly work: Iterator<void, ReadyQuotas>;
  private ready: ReadyQuotas | undefined;
  private failure: Error | undefined;

  /** `nextTable`: the engine's next table number, given to the set's new quotas in turn. */
  constructor(
    private readonly specs: readonly QuotaSpec[],
    private readonly base: QuotaResolver,
    nextTable: number,
  ) {
    this.nextTable = nextTable;
    this.builder = new QuotaResolverBuilder(base);
    this.work = this.prepare();
  }

  /**
   * Does up to `budget` units of work (a quota compiled, a name compared, a pattern indexed);
   * true once the set is ready. Throws InvalidQuotaError for the first invalid quota in definition
   * order, then again on every call: the set is unusable.
   */
  step(budget: number): boolean {
    if (this.failure !== undefined) throw this.failure;
    if (this.ready !== undefined) return true;
    try {
      for (let done = 0; done < budget; done++) {
        const next = this.work.next();
        if (next.done === true) {
          this.ready = next.value;
          return true;
        }
      }
      return false;
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      throw this.failure;
    }
  }

  /** The set, once `step` answered true. */
  result(): ReadyQuotas {
    if (this.ready === undefined) throw new Error('the quota set is not prepared yet');
    return this.ready;
  }

  private *prepare(): Generator<void, ReadyQuotas> {
    for (const spec of this.specs) {
      this.add(spec);
      yield;
    }
    const removed: CompiledQuota[] = [];
    for (const q of this.base.all()) {
      if (!this.names.has(q.name)) removed.push(q);
      yield;
    }
    for (;;) {
      const resolver = this.builder.build(1);
      if (resolver !== undefined) {
        const { compiled, names, base, changed, nextTable } = this;
        return { compiled, names, resolver, base, changed, removed, nextTable };
      }
      yield;
    }
  }

  private add(spec: QuotaSpec): void {
    const unchanged = this.unchanged(spec);
    const q = unchanged ?? compileQuota(spec);
    if (this.names.has(q.name)) throw new InvalidQuotaError(q.name, 'name', 'is defined twice');
    this.names.add(q.name);
    this.compiled.push(q);
    if (unchanged === undefined) {
      // Its table: the one of the quota of this name in force, else the next one (the commit
      // gives it another if the set in force changed meanwhile).
      const before = this.base.byNameOrUndefined(q.name);
      q.table = before?.table ?? this.nextTable++;
      if (before !== undefined) this.changed.push([before, q]);
    }
    this.builder.add(q);
  }

  /** The compiled quota in force under this name, if its spec is the same. */
  private unchanged(spec: QuotaSpec): CompiledQuota | undefined {
    const q = this.base.byNameOrUndefined(spec.name);
    if (q === undefined) return undefined;
    return q.spec === spec || JSON.stringify(q.spec) === JSON.stringify(spec) ? q : undefined;
  }
}
