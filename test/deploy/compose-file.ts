/**
 * docker-compose.yml as Compose reads it: YAML with merge keys (`<<:`), checked against the
 * Compose specification's schema (vendored in compose-spec/), then read as typed services.
 */
import Ajv from 'ajv';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ComposeHealthcheck {
  readonly test?: string | readonly string[];
}

export interface ComposeService {
  readonly image?: string;
  readonly build?: unknown;
  readonly command?: string | readonly string[];
  readonly entrypoint?: string | readonly string[];
  readonly environment?:
    Readonly<Record<string, string | number | boolean | null>> | readonly string[];
  readonly ports?: readonly (string | number | { target: number })[];
  readonly volumes?: readonly (string | { source?: string; target: string; read_only?: boolean })[];
  readonly depends_on?: readonly string[] | Readonly<Record<string, { condition?: string }>>;
  readonly healthcheck?: ComposeHealthcheck;
  readonly stop_grace_period?: string;
  readonly read_only?: boolean;
}

export interface ComposeFile {
  readonly services: Readonly<Record<string, ComposeService>>;
  readonly volumes?: Readonly<Record<string, unknown>>;
}

/** The document after merge keys are applied (as Compose does before it validates). */
export function readComposeDocument(text: string): unknown {
  return parse(text, { merge: true, prettyErrors: true });
}

const composeSchema = JSON.parse(
  readFileSync(join(__dirname, 'compose-spec', 'compose-spec.json'), 'utf8'),
) as object;
// The schema is the Compose project's: its union types and untyped oneOf branches are its style.
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
// The schema names draft-07 by its https address; ajv knows it by the http one.
ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
const validate = ajv.compile(composeSchema);

/** Where the document breaks the Compose specification, one line per problem. */
export function composeSchemaErrors(document: unknown): string[] {
  if (validate(document)) return [];
  return (validate.errors ?? []).map(
    (e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
  );
}

/** `environment` as a map, whichever of its two forms the file uses. */
export function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      (env as readonly string[]).map((entry) => {
        const at = entry.indexOf('=');
        return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** The variable a value takes from the environment of `docker compose` (`${NAME...}`), if any. */
export function interpolatedName(value: string): string | undefined {
  return /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(?::?[-?+]).*)?\}$/.exec(value)?.[1];
}

/** Every variable the file interpolates, anywhere in it. */
export function interpolatedNames(text: string): string[] {
  const names = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
  return [...new Set(names)];
}

/** Container ports a service publishes (short syntax `[ip:]host:container`, or long syntax). */
export function containerPorts(service: ComposeService): number[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return port.target;
    return Number(String(port).split(':').at(-1)!.split('/')[0]);
  });
}

/** Volumes as source and target, from the short syntax `source:target[:mode]`. */
export function mounts(service: ComposeService): { source: string; target: string }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume === 'object') return { source: volume.source ?? '', target: volume.target };
    const [source = '', target = ''] = volume.split(':');
    return { source, target };
  });
}

/** A Compose duration (`30s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMs(value: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001 };
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  if (parts.map((p) => p[0]).join('') !== value)
    throw new Error(`not a Compose duration: ${value}`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit!]!, 0);
}

/** `depends_on` as service name → condition. */
export function dependencies(service: ComposeService): Record<string, string | undefined> {
  const deps = service.depends_on ?? [];
  if (Array.isArray(deps)) return Object.fromEntries((deps as string[]).map((d) => [d, undefined]));
  return Object.fromEntries(Object.entries(deps).map(([name, d]) => [name, d.condition]));
}
