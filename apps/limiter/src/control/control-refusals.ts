import type { Refusal } from '@app/contracts';
import { ThrottledLog } from '@app/logging';

/** What was refused: a bucket entry (put or delete), a control request, a stats report. */
export type ControlKind = 'entry' | 'request' | 'report';

/** A sender without the key can send these at will: each kind's lines are rate-limited. */
const LOGS: Readonly<Record<ControlKind, ThrottledLog>> = {
  entry: new ThrottledLog('Control', 'control.entry-refused', 'warn'),
  request: new ThrottledLog('Control', 'control.request-refused', 'warn'),
  report: new ThrottledLog('Control', 'control.report-refused', 'warn'),
};

/**
 * Control refused for its signature or its age (docs/operations.md, "Control keys"): counted by
 * kind and cause (`ratelimit_control_refused_total{kind, cause}`) and logged, a bounded number of lines a
 * second per kind. Nothing refused is applied.
 */
export class ControlRefusals {
  private readonly counts = new Map<string, number>();

  refused(kind: ControlKind, refusal: Refusal, reason: string): void {
    const label = `${kind} ${refusal}`;
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
    LOGS[kind].write(() => ({ msg: `control ${kind} refused: ${reason}`, cause: refusal }));
  }

  /** Counts so far, by kind and reason (only those that happened). */
  get totals(): { kind: ControlKind; reason: Refusal; count: number }[] {
    return [...this.counts].map(([label, count]) => {
      const [kind, reason] = label.split(' ') as [ControlKind, Refusal];
      return { kind, reason, count };
    });
  }
}
