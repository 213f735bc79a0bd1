/** Typed errors of the engine. The engine never throws for a request; only for bad configuration. */
export class EngineError extends Error {
  override readonly name: string = 'EngineError';
}

/** A quota definition the engine cannot enforce; `field` is its path, e.g. `limits[1].windowMs`. */
export class InvalidQuotaError extends EngineError {
  override readonly name = 'InvalidQuotaError';
  constructor(
    readonly quota: string,
    readonly field: string,
    message: string,
  ) {
    super(`quota ${JSON.stringify(quota)}: ${field}: ${message}`);
  }
}

/** A snapshot from an incompatible version. */
export class SnapshotError extends EngineError {
  override readonly name = 'SnapshotError';
}
