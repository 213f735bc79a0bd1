/** What the validators return: the request as the engine takes it, with defaults applied. */

/** Cost per unit; `requests` is always present (default 1), other missing units cost 0. */
export type CostByUnit = Readonly<Record<string, number>>;

export interface NormalisedAcquire {
  /** NFC. */
  readonly key: string;
  readonly quota?: string;
  readonly cost: CostByUnit;
  readonly wait?: boolean;
  readonly maxWaitMs?: number;
  readonly requestId?: string;
  readonly deadline?: number;
}

export interface NormalisedRelease {
  readonly key: string;
  readonly quota?: string;
  readonly requestId?: string;
  readonly leaseId?: string;
}

export interface NormalisedUsage {
  readonly key: string;
  readonly quota?: string;
  readonly requestId?: string;
  readonly cost: CostByUnit;
}

export interface NormalisedStats {
  readonly key: string;
  readonly quota?: string;
}
