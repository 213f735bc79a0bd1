import {
  composeQuotas,
  goccDefaultQuota,
  type ControlSet,
  type LimiterConfig,
  type QuotaSpec,
} from '@app/contracts';
import { InvalidQuotaError } from '@app/engine';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';

export interface ControlLayerStats {
  /** Control sets put in force. */
  applied: number;
  /** Control sets the engine refused (the last good set stayed in force). */
  refused: number;
}

/**
 * The quotas in force are composed from two layers (composeQuotas): the limiter's own config
 * (CONFIG_FILE, or the default quota from the GoCC variables) and the admin's control set. Either
 * layer changing recomposes. A composition the engine refuses changes nothing: a refused config
 * throws to the config loader (which reports the file), a refused control set is logged and the
 * last good one stays. The refused control set is retried with the next config, which may be the
 * fix (a config quota that held the same match pattern, say).
 */
@Injectable()
export class QuotaLayersService {
  private readonly log = new Logger('Control');
  private config: LimiterConfig;
  /** The control set in force; undefined until one is known (from NATS or the SQLite copy). */
  private control: ControlSet | undefined;
  /** The latest control set received, in force or refused. */
  private wanted: ControlSet | undefined;
  /** Both as JSON, to tell a set received again from a new one. */
  private controlText: string | undefined;
  private wantedText: string | undefined;
  private readonly listeners: (() => void)[] = [];
  readonly stats: ControlLayerStats = { applied: 0, refused: 0 };

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly limiter: LimiterService,
    private readonly readiness: ReadinessService,
  ) {
    this.config = { format: 'native', quotas: [goccDefaultQuota(settings.gocc)], providers: [] };
  }

  /** Runs after every composition put in force, whichever layer changed. */
  onApplied(listener: () => void): void {
    this.listeners.push(listener);
  }

  get controlInForce(): ControlSet | undefined {
    return this.control;
  }

  /** Puts a config in force over the current control set. Throws, changing nothing, if refused. */
  setConfig(config: LimiterConfig): void {
    if (this.wanted !== undefined && this.wanted !== this.control) {
      try {
        this.apply(config, this.wanted);
        this.config = config;
        this.controlApplied(this.wanted, this.wantedText ?? JSON.stringify(this.wanted));
        return;
      } catch {
        // still refused with this config: keep the control set in force, try the config alone
      }
    }
    this.apply(config, this.control);
    this.config = config;
    this.notify();
  }

  /**
   * setConfig without holding the event loop (LimiterService.setQuotasInSlices), for a reload of a
   * file that may hold tens of thousands of quotas. A control set put in force meanwhile (by
   * setControl, at once) makes it compose again with that set, so neither change is lost.
   */
  async setConfigInSlices(config: LimiterConfig): Promise<void> {
    for (;;) {
      const wanted = this.wanted;
      if (wanted !== undefined && wanted !== this.control) {
        const text = this.wantedText ?? JSON.stringify(wanted);
        try {
          if (!(await this.applyInSlices(config, wanted))) continue;
          this.config = config;
          this.controlApplied(wanted, text);
          return;
        } catch {
          // still refused with this config: keep the control set in force, try the config alone
        }
      }
      if (!(await this.applyInSlices(config, this.control))) continue;
      this.config = config;
      this.notify();
      return;
    }
  }

  /**
   * Puts a control set in force; answers false (logged) when the engine refuses it. The same set
   * again (a watch replaying the bucket after a reconnect) changes nothing and logs nothing.
   */
  setControl(control: ControlSet): boolean {
    const text = JSON.stringify(control);
    if (text === this.controlText) {
      this.wanted = this.control;
      this.wantedText = text;
      return true;
    }
    if (text === this.wantedText) return false;
    this.wanted = control;
    this.wantedText = text;
    try {
      this.apply(this.config, control);
    } catch (error) {
      this.stats.refused++;
      const reason = error instanceof Error ? error.message : String(error);
      this.readiness.controlError = reason;
      this.log.error(`control set refused (the last good set stays in force): ${reason}`);
      return false;
    }
    this.controlApplied(control, text);
    return true;
  }

  /** `text`: the set's JSON, as setControl computed it. */
  private controlApplied(control: ControlSet, text: string): void {
    this.control = control;
    this.controlText = text;
    this.stats.applied++;
    this.readiness.controlError = undefined;
    const enabled = control.providers.filter((p) => p.enabled).map((p) => p.name);
    this.log.log(
      `control set in force: ${control.quotas.length} admin quotas, providers enabled: ` +
        `${enabled.length > 0 ? enabled.join(', ') : 'none'} (${this.limiter.quotas().length} quotas in all)`,
    );
    this.notify();
  }

  private apply(config: LimiterConfig, control: ControlSet | undefined): void {
    this.limiter.setQuotas(this.compose(config, control));
  }

  /** apply, in slices; false when another set came in force meanwhile (nothing changed). */
  private applyInSlices(config: LimiterConfig, control: ControlSet | undefined): Promise<boolean> {
    return this.limiter.setQuotasInSlices(this.compose(config, control));
  }

  private compose(config: LimiterConfig, control: ControlSet | undefined): QuotaSpec[] {
    const quotas = composeQuotas(config, control, {
      scope: this.settings.providerScope,
      queue: this.settings.providerQueue,
    });
    refuseSharedPatterns(quotas, control);
    return quotas;
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

/**
 * The config file refuses two quotas with one match pattern (resolution would pick by definition
 * order, silently); composeQuotas and the engine do not look across layers, so an admin quota
 * whose pattern another quota already has is refused here, naming both.
 */
function refuseSharedPatterns(quotas: readonly QuotaSpec[], control: ControlSet | undefined): void {
  if (control === undefined || control.quotas.length === 0) return;
  const owners = new Map<string, string[]>();
  for (const q of quotas) {
    if (q.match !== undefined) owners.set(q.match, [...(owners.get(q.match) ?? []), q.name]);
  }
  for (const { spec } of control.quotas) {
    const other = owners.get(spec.match ?? '')?.find((name) => name !== spec.name);
    if (spec.match !== undefined && other !== undefined) {
      throw new InvalidQuotaError(
        spec.name,
        'match',
        `${JSON.stringify(spec.match)} is the same pattern as quota ${JSON.stringify(other)}`,
      );
    }
  }
}
