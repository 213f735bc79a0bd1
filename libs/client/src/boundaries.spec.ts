/**
 * The core ships without a framework and without the service: nothing under libs/client/src
 * (except nest/, the NestJS entry, and specs) may import from apps/ or @nestjs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = __dirname;
const IMPORT =
  /(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'nest' && dir === root ? [] : sources(path);
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

/** Value imports of the contracts' index, which would pull its config parser (yaml, re2js) in. */
export function contractsIndexValueImports(text: string): number {
  return [...text.matchAll(/^(?:import|export) (?!type )[^;]*?from '@app\/contracts';/gms)].length;
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
    expect(contractsIndexValueImports("import { natsSubjects } from '@app/contracts';")).toBe(1);
    expect(contractsIndexValueImports("import type { KeyStats } from '@app/contracts';")).toBe(0);
    expect(
      contractsIndexValueImports("import { natsSubjects } from '@app/contracts/subjects';"),
    ).toBe(0);
  });

  it("takes values from the contracts' modules, never their index (types only)", () => {
    const offenders = sources(root).filter(
      (file) => contractsIndexValueImports(readFileSync(file, 'utf8')) > 0,
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
