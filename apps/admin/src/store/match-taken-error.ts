/** A quota that would take a match pattern another quota has. */
export interface MatchConflict {
  /** The quota being written. */
  readonly quota: string;
  readonly match: string;
  /** The quota that has the pattern; undefined when only the database's index saw it. */
  readonly owner?: string;
}

/**
 * Thrown by the store, inside the writing transaction, when a write would give two quotas one
 * match pattern. Nothing was written.
 */
export class MatchTakenError extends Error {
  constructor(readonly conflicts: readonly MatchConflict[]) {
    super(
      conflicts.length === 0
        ? 'a match pattern is already the pattern of another quota'
        : conflicts
            .map(
              (c) =>
                `quota "${c.quota}": match ${JSON.stringify(c.match)} is the pattern of ` +
                (c.owner === undefined ? 'another quota' : `quota "${c.owner}"`),
            )
            .join('; '),
    );
    this.name = 'MatchTakenError';
  }
}
