import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ENV_VARIABLES } from './env-variables';

const root = join(__dirname, '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(path);
    return e.name.endsWith('.ts') && !/\.(spec|test-util)\.ts$/.test(e.name) ? [path] : [];
  });
}

describe('ENV_VARIABLES', () => {
  it('names each variable once, in UPPER_SNAKE_CASE, with the apps that read it', () => {
    const names = ENV_VARIABLES.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const v of ENV_VARIABLES) {
      expect(v.name).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(v.apps.length).toBeGreaterThan(0);
      expect(v.meaning.length).toBeGreaterThan(0);
    }
  });

  // `Env` is keyed by ENV_VARIABLES, so a variable read through it must be listed. This keeps every
  // read on that path: process.env is only ever handed over whole, as an Env.
  it('is the only way the apps read the environment', () => {
    const stray: string[] = [];
    for (const file of [...sources(join(root, 'apps')), ...sources(join(root, 'libs'))]) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (!line.includes('process.env')) return;
          if (/\benv: Env = process\.env\b/.test(line)) return;
          stray.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(stray).toEqual([]);
  });
});
