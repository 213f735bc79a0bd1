/**
 * The core ships without a framework and without the service: nothing under libs/client/src
 * (except nest/ and throttler/, the NestJS entries, and specs) may import from apps/ or @nestjs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = __dirname;
const IMPORT =
  /(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The package's sources (specs aside); nest/ and throttler/ only when `entries`. */
function sources(dir: string, entries = false): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    const framework = dir === root && (entry.name === 'nest' || entry.name === 'throttler');
    if (entry.isDirectory()) return framework && !entries ? [] : sources(path, entries);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

export function forbiddenImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = match[1] ?? match[2] ?? match[3] ?? '';
    if (target.startsWith('@nestjs/') || /(^|\/)apps\//.test(target)) found.push(target);
  }
  return found;
}

/**
 * Imports of the contracts' index, values or types: a value would load its config parser (yaml,
 * re2js), a type would put every contract module (and yaml's types) into the package.
 */
export function contractsIndexImports(text: string): number {
  return [...text.matchAll(/^(?:import|export) [^;]*?from '@app\/contracts';/gms)].length;
}

describe('libs/client core imports', () => {
  it('finds the imports it is meant to refuse (the scan itself works)', () => {
    expect(forbiddenImports("import { Injectable } from '@nestjs/common';")).toEqual([
      '@nestjs/common',
    ]);
    expect(forbiddenImports("import type { X } from '../../../apps/limiter/src/x';")).toEqual([
      '../../../apps/limiter/src/x',
    ]);
    expect(forbiddenImports("const x = require('@nestjs/core');")).toEqual(['@nestjs/core']);
    expect(forbiddenImports("import { natsSubjects } from '@app/contracts';")).toEqual([]);
    expect(contractsIndexImports("import { natsSubjects } from '@app/contracts';")).toBe(1);
    expect(contractsIndexImports("import type { KeyStats } from '@app/contracts';")).toBe(1);
    expect(contractsIndexImports("export type { KeyStats } from '@app/contracts';")).toBe(1);
    expect(contractsIndexImports("import { natsSubjects } from '@app/contracts/subjects';")).toBe(
      0,
    );
  });

  it("takes values and types from the contracts' modules, never their index", () => {
    const offenders = sources(root, true).filter(
      (file) => contractsIndexImports(readFileSync(file, 'utf8')) > 0,
    );
    expect(offenders.map((file) => relative(root, file))).toEqual([]);
  });

  it('imports nothing from apps/ or @nestjs outside nest/', () => {
    const files = sources(root);
    expect(files.length).toBeGreaterThan(5);
    const offenders = files.flatMap((file) =>
      forbiddenImports(readFileSync(file, 'utf8')).map(
        (target) => `${relative(root, file)}: ${target}`,
      ),
    );
    expect(offenders).toEqual([]);
  });
});
