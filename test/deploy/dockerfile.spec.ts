/**
 * The Dockerfile and .dockerignore, read by a parser (no Docker engine runs here): stages, a
 * non-root final stage, a HEALTHCHECK, the ports and commands of the apps, and a build context
 * that holds every file the build copies and the apps read at run time.
 */
import ignore from '@balena/dockerignore';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { appCommand, APPS, appPort, REPO_ROOT, repoFile, repoPathExists } from './app-facts';
import { execForm, flag, instructions, readStages, words, type Stage } from './dockerfile';

const stages = readStages(repoFile('Dockerfile'));
const final = stages.at(-1)!;
const context = ignore().add(repoFile('.dockerignore'));

/** Files under `path` (a file: itself) that the build context keeps. */
function contextFiles(path: string): string[] {
  const full = join(REPO_ROOT, path);
  if (!statSync(full).isDirectory()) return context.ignores(path) ? [] : [path];
  return readdirSync(full).flatMap((name) => contextFiles(join(path, name)));
}

/** COPY sources from the context that are missing from it, or that it leaves out. */
function copyProblems(all: readonly Stage[]): string[] {
  return all.flatMap((stage) =>
    instructions(stage, 'COPY')
      .filter((copy) => flag(copy, 'from') === undefined)
      .flatMap((copy) => words(copy).slice(0, -1))
      .flatMap((source) => {
        if (!repoPathExists(source)) return [`COPY ${source}: no such file`];
        return contextFiles(source).length === 0
          ? [`COPY ${source}: left out by .dockerignore`]
          : [];
      }),
  );
}

describe('Dockerfile', () => {
  it('builds in one stage and runs in another, on Node 20', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toMatch(/^node:20[.-]/);
    const build = stages.find((s) => s !== final)!;
    const runs = instructions(build, 'RUN').map((r) => words(r).join(' '));
    expect(runs.some((r) => r.includes('npm ci'))).toBe(true);
    expect(runs.some((r) => r.includes('npm run build'))).toBe(true);
  });

  it('runs with production dependencies only: node_modules comes from a stage that dropped the dev ones', () => {
    const copies = instructions(final, 'COPY').filter((c) =>
      words(c).at(-1)!.includes('node_modules'),
    );
    expect(copies).toHaveLength(1);
    const from = stages.find((s) => s.name === flag(copies[0]!, 'from'))!;
    const runs = instructions(from, 'RUN').map((r) => words(r).join(' '));
    expect(runs.some((r) => /npm (prune|ci) .*--omit=dev/.test(r))).toBe(true);
    expect(instructions(final, 'RUN').some((r) => words(r).includes('npm'))).toBe(false);
  });

  it('runs as a numeric, non-root user (Kubernetes can check runAsNonRoot)', () => {
    const users = instructions(final, 'USER').map((u) => words(u)[0]!);
    expect(users.at(-1)).toMatch(/^[1-9]\d*(:\d+)?$/);
  });

  it('runs the limiter by default under tini, and is the image of either app', () => {
    expect(execForm(instructions(final, 'ENTRYPOINT').at(-1)!)).toEqual(['/usr/bin/tini', '--']);
    expect(execForm(instructions(final, 'CMD').at(-1)!)).toEqual(appCommand('limiter'));
    // The bundles npm run build writes, which npm run start:<app> runs (exec: npm's shell is
    // replaced by the app, so a signal to npm reaches it; test/npm-start-signals.e2e-spec.ts).
    const scripts = (JSON.parse(repoFile('package.json')) as { scripts: Record<string, string> })
      .scripts;
    for (const app of APPS) {
      expect(scripts[`start:${app}`]).toBe(`exec ${appCommand(app).join(' ')}`);
    }
    const runs = instructions(final, 'RUN').map((r) => words(r).join(' '));
    expect(runs.some((r) => /apt-get install .*\btini\b/.test(r))).toBe(true);
  });

  it("exposes the apps' ports", () => {
    const exposed = instructions(final, 'EXPOSE').flatMap(words).map(Number);
    expect(exposed.sort()).toEqual(APPS.map((app) => appPort(app, {})).sort());
  });

  it('has a HEALTHCHECK that runs node (the slim image has no curl)', () => {
    const checks = instructions(final, 'HEALTHCHECK');
    expect(checks).toHaveLength(1);
    const command = execForm(checks[0]!)!;
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    expect(command[2]).toContain('/healthz');
  });

  it('copies files that exist and that .dockerignore lets into the build context', () => {
    expect(copyProblems(stages)).toEqual([]);
  });

  it('keeps in the context what the apps read at run time besides their code (the Lua scripts)', () => {
    const lua = contextFiles('apps/limiter/src/cluster/lua');
    expect(lua).toEqual(expect.arrayContaining([expect.stringMatching(/driver\.lua$/)]));
    expect(lua.filter((f) => f.endsWith('.lua'))).toHaveLength(
      readdirSync(join(REPO_ROOT, 'apps/limiter/src/cluster/lua')).filter((f) => f.endsWith('.lua'))
        .length,
    );
  });

  it('leaves secrets, dependencies and build output out of the context', () => {
    for (const path of ['.env', 'node_modules', 'dist', 'data', '.git']) {
      expect([path, context.ignores(path)]).toEqual([path, true]);
    }
  });

  it('finds a COPY of a file .dockerignore leaves out, and of a file that does not exist', () => {
    const bad = readStages('FROM node:20-slim\nCOPY README.md ./\nCOPY no-such-file ./\n');
    expect(copyProblems(bad)).toEqual([
      'COPY README.md: left out by .dockerignore',
      'COPY no-such-file: no such file',
    ]);
  });
});
