import { ConfigError, GOCC_DEFAULTS, type ConfigIssue, type GoccSettings } from '@app/contracts';
import type { ImportFormat, ImportPlan } from './import-plan';
import { parseImport } from './parse-import';

/** Shared by the import specs: a fixed clock and short ways to read plans and refusals. */

export const NOW = Date.parse('2026-11-21T10:00:30Z');

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function plan(
  document: string,
  format: ImportFormat = 'yaml',
  gocc: GoccSettings = GOCC_DEFAULTS,
  now = NOW,
): ImportPlan {
  return parseImport(document, format, { gocc, now });
}

export function refusal(document: string, format: ImportFormat = 'yaml'): ConfigError {
  try {
    plan(document, format);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('the document was accepted');
}

/** `3 quotas[0].limits[0].limit`: line and path of each issue. */
export function where(error: ConfigError): string[] {
  return error.issues.map((issue: ConfigIssue) => `${issue.line ?? '?'} ${issue.path}`);
}
