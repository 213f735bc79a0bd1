/**
 * k8s/ assembled the way `kustomize build` would: the resources kustomization.yaml lists, plus the
 * ConfigMaps its configMapGenerator makes. Only the fields this base uses are understood; any other
 * is reported, so the checks never pass over something they did not read.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './app-facts';

export const BASE_DIR = join(REPO_ROOT, 'k8s');

export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

export interface Located {
  /** The file under k8s/ it comes from (a generator's source file for a generated ConfigMap). */
  readonly file: string;
  readonly object: K8sObject;
}

interface ConfigMapGenerator {
  readonly name: string;
  readonly files: readonly string[];
  readonly options?: { readonly disableNameSuffixHash?: boolean };
}

export interface Kustomization {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resources: readonly string[];
  readonly configMapGenerator?: readonly ConfigMapGenerator[];
  readonly images?: readonly {
    readonly name: string;
    readonly newTag?: string;
    readonly newName?: string;
  }[];
  readonly labels?: readonly unknown[];
}

const UNDERSTOOD = ['apiVersion', 'kind', 'resources', 'configMapGenerator', 'images', 'labels'];

/** Examples sit beside the base, checked like it, never part of it. */
export const isExample = (file: string): boolean => file.endsWith('.example.yaml');

export function readKustomization(): Kustomization {
  return parse(readFileSync(join(BASE_DIR, 'kustomization.yaml'), 'utf8')) as Kustomization;
}

/** A generator's `files` entry: `path` or `key=path`. */
export function generatorFile(entry: string): { key: string; path: string } {
  const at = entry.indexOf('=');
  const path = at < 0 ? entry : entry.slice(at + 1);
  return { key: at < 0 ? basename(path) : entry.slice(0, at), path };
}

/** Every file under k8s/, relative to it. */
export function baseFiles(dir = BASE_DIR): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? baseFiles(path) : [relative(BASE_DIR, path)];
  });
}

/** How k8s/ and its kustomization.yaml disagree: files left out, missing, or fields not read. */
export function kustomizationProblems(k: Kustomization, files: readonly string[]): string[] {
  const problems: string[] = [];
  for (const field of Object.keys(k)) {
    if (!UNDERSTOOD.includes(field))
      problems.push(`kustomization.yaml: ${field} is not assembled by these checks`);
  }
  const generated = (k.configMapGenerator ?? []).flatMap((g) =>
    g.files.map((f) => generatorFile(f).path),
  );
  const listed = [...k.resources, ...generated];
  for (const file of listed) {
    if (!files.includes(file))
      problems.push(`kustomization.yaml lists ${file}, which does not exist`);
    if (isExample(file)) problems.push(`kustomization.yaml lists the example ${file}`);
  }
  for (const file of files) {
    if (file === 'kustomization.yaml' || isExample(file) || listed.includes(file)) continue;
    problems.push(`${file} is in k8s/ but not in kustomization.yaml`);
  }
  return problems;
}

/** The documents of one file of k8s/; a YAML error throws, naming the file. */
export function readObjects(file: string): K8sObject[] {
  const documents = parseAllDocuments(readFileSync(join(BASE_DIR, file), 'utf8'));
  return documents.map((document) => {
    if (document.errors.length > 0) throw new Error(`k8s/${file}: ${document.errors[0]!.message}`);
    return document.toJS() as K8sObject;
  });
}

/** The base's objects: its resources, then its generated ConfigMaps. */
export function assembleBase(k: Kustomization): Located[] {
  const resources = k.resources.flatMap((file) =>
    readObjects(file).map((object) => ({ file, object })),
  );
  const generated = (k.configMapGenerator ?? []).map((g) => ({
    file: generatorFile(g.files[0] ?? '').path,
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: g.name },
      data: Object.fromEntries(
        g.files
          .map(generatorFile)
          .map(({ key, path }) => [key, readFileSync(join(BASE_DIR, path), 'utf8')]),
      ),
    },
  }));
  return [...resources, ...generated];
}
