/** The message of a thrown value, for a log line or a `reason`. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
