import { InvalidQuotaError } from '../errors';
import type { QuotaSpec } from '../types';
import { compileQuota, type CompiledQuota } from './compile';
import { QuotaResolver, QuotaResolverBuilder } from './resolver';

/** A quota set compiled and indexed, ready to be put in force (Engine.commitQuotas). */
export interface ReadyQuotas {
  readonly compiled: readonly CompiledQuota[];
  readonly names: ReadonlySet<string>;
  readonly resolver: QuotaResolver;
}

/**
 * A quota set on its way into force (Engine.prepareQuotas): validated, compiled and indexed in
 * steps of bounded work (`step`), which a host runs between requests; Engine.commitQuotas then
 * puts it in force at once. A quota whose spec equals the one in force keeps its compiled form,
 * so putting it in force costs nothing. Nothing here touches the engine's state.
 */
export class PreparedQuotas {
  private next = 0;
  private readonly compiled: CompiledQuota[] = [];
  private readonly names = new Set<string>();
  private readonly builder: QuotaResolverBuilder;
  private ready: ReadyQuotas | undefined;

  constructor(
    private readonly specs: readonly QuotaSpec[],
    private readonly inForce: QuotaResolver,
  ) {
    this.builder = new QuotaResolverBuilder(inForce);
  }

  /**
   * Does up to `budget` quotas' worth of work; true once the set is ready. Throws
   * InvalidQuotaError for the first invalid quota in definition order (the set is then unusable).
   */
  step(budget: number): boolean {
    if (this.ready !== undefined) return true;
    const start = this.next;
    const end = Math.min(this.specs.length, start + budget);
    for (; this.next < end; this.next++) this.add(this.specs[this.next]!);
    const left = budget - (end - start);
    if (this.next < this.specs.length || left <= 0) return false;
    const resolver = this.builder.build(left);
    if (resolver === undefined) return false;
    this.ready = { compiled: this.compiled, names: this.names, resolver };
    return true;
  }

  /** The set, once `step` answered true. */
  result(): ReadyQuotas {
    if (this.ready === undefined) throw new Error('the quota set is not prepared yet');
    return this.ready;
  }

  private add(spec: QuotaSpec): void {
    const q = this.unchanged(spec) ?? compileQuota(spec);
    if (this.names.has(q.name)) throw new InvalidQuotaError(q.name, 'name', 'is defined twice');
    this.names.add(q.name);
    this.compiled.push(q);
    this.builder.add(q);
  }

  /** The compiled quota in force under this name, if its spec is the same. */
  private unchanged(spec: QuotaSpec): CompiledQuota | undefined {
    const q = this.inForce.byNameOrUndefined(spec.name);
    if (q === undefined) return undefined;
    return q.spec === spec || JSON.stringify(q.spec) === JSON.stringify(spec) ? q : undefined;
  }
}
