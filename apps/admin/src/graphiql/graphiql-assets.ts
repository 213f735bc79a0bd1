import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A file the GraphiQL page loads, read once at start and served from memory. */
export interface GraphiqlAsset {
  readonly type: string;
  readonly body: Buffer;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/**
 * The prebuilt browser builds shipped inside the npm packages (GraphiQL 4 is the last line with
 * one; React 18 the last with UMD files), and our start script. Nothing is fetched from elsewhere.
 */
const SOURCES = {
  react: { packageName: 'react', path: 'umd/react.production.min.js', type: JS },
  reactDom: { packageName: 'react-dom', path: 'umd/react-dom.production.min.js', type: JS },
  graphiql: { packageName: 'graphiql', path: 'graphiql.min.js', type: JS },
  graphiqlCss: { packageName: 'graphiql', path: 'graphiql.min.css', type: CSS },
  start: { packageName: undefined, path: 'start-graphiql.js', type: JS },
} as const;

/** react.<hash>.js, react-dom.<hash>.js, graphiql.<hash>.css, start-graphiql.<hash>.js, … */
function servedName(source: SourceFile, body: Buffer): string {
  const file = source.path.slice(source.path.lastIndexOf('/') + 1);
  const [stem] = file.split('.');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return `${stem}.${hash}${file.slice(file.lastIndexOf('.'))}`;
}

export type GraphiqlFile = keyof typeof SOURCES;

export interface GraphiqlAssets {
  /** Each file's name under /graphiql/: its role and a hash of its bytes, so it is cached for good. */
  readonly names: Readonly<Record<GraphiqlFile, string>>;
  readonly byName: ReadonlyMap<string, GraphiqlAsset>;
}

/** Throws naming the package when one is not installed: the admin then does not start. */
export function readGraphiqlAssets(): GraphiqlAssets {
  const fromHere = createRequire(join(__dirname, 'graphiql-assets.js'));
  const names = {} as Record<GraphiqlFile, string>;
  const byName = new Map<string, GraphiqlAsset>();
  for (const [file, source] of Object.entries(SOURCES) as [GraphiqlFile, SourceFile][]) {
    const dir =
      source.packageName === undefined
        ? browserDir()
        : dirname(fromHere.resolve(`${source.packageName}/package.json`));
    const body = readFileSync(join(dir, source.path));
    const name = servedName(source, body);
    names[file] = name;
    byName.set(name, { type: source.type, body });
  }
  return { names, byName };
}

type SourceFile = (typeof SOURCES)[GraphiqlFile];

/** `browser/` beside this file when run from source; `graphiql/browser/` beside the bundle. */
function browserDir(): string {
  const candidates = [join(__dirname, 'browser'), join(__dirname, 'graphiql', 'browser')];
  return candidates.find((d) => existsSync(join(d, SOURCES.start.path))) ?? candidates[0]!;
}
