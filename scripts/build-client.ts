/**
 * Builds the publishable `@ratelimit/client` into libs/client/dist: CommonJS and declarations for
 * its entries (`.`, `./nest`, `./throttler`), with the contract modules they use compiled beside
 * them under dist/contracts/. The wire contract is not published on its own, so every
 * `@app/contracts/...` specifier (in JavaScript and in declarations) becomes a relative path into
 * the package: nothing of `@app/*` is left at run time or in types.
 *
 * Usage: npm run build:client   (then `npm pack ./libs/client`)
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..');
const CLIENT = join(ROOT, 'libs', 'client');
const OUT = join(CLIENT, 'dist');
const SOURCES: readonly [from: string, to: string][] = [
  [join(CLIENT, 'src'), OUT],
  [join(ROOT, 'libs', 'contracts', 'src'), join(OUT, 'contracts')],
];
export const ENTRIES = ['index', 'nest/index', 'throttler/index'] as const;

/** Where a compiled file of the repository goes in the package. */
function placed(file: string): string {
  for (const [from, to] of SOURCES) {
    if (file.startsWith(from + sep)) return join(to, relative(from, file));
  }
  throw new Error(`${relative(ROOT, file)} is imported by the client but is not shipped with it`);
}

/** `@app/contracts` and `@app/contracts/x` as paths relative to the emitted file. */
function rewritten(text: string, outFile: string): string {
  const specifier = /(["'])@app\/contracts(\/[^"']*)?\1/g;
  return text.replace(specifier, (_match, quote: string, sub: string | undefined) => {
    let path = relative(dirname(outFile), join(OUT, 'contracts', sub ?? '/index'));
    path = path.split(sep).join('/');
    return `${quote}${path.startsWith('.') ? path : `./${path}`}${quote}`;
  });
}

export function buildClient(): string[] {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    declaration: true,
    sourceMap: false,
    removeComments: false,
    noEmitOnError: true,
    incremental: false,
    types: ['node'],
    rootDir: join(ROOT, 'libs'),
    outDir: OUT,
  };
  delete options.tsBuildInfoFile;
  const roots = ENTRIES.map((entry) => join(CLIENT, 'src', `${entry}.ts`));
  const program = ts.createProgram(roots, options);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) {
    const host: ts.FormatDiagnosticsHost = {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => ROOT,
      getNewLine: () => '\n',
    };
    throw new Error(ts.formatDiagnostics(diagnostics, host));
  }
  rmSync(OUT, { recursive: true, force: true });
  const written: string[] = [];
  const result = program.emit(undefined, (fileName, text) => {
    // tsc places outputs under outDir by their path below rootDir (libs/): map them to the package.
    const source = join(ROOT, 'libs', relative(OUT, fileName)).replace(/\.d\.ts$|\.js$/, '.ts');
    const target = placed(source).replace(/\.ts$/, fileName.endsWith('.d.ts') ? '.d.ts' : '.js');
    const out = rewritten(text, target);
    if (out.includes('@app/')) throw new Error(`${target} still names @app/`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, out);
    written.push(relative(CLIENT, target));
  });
  if (result.emitSkipped) throw new Error('the client build emitted nothing');
  return written.sort();
}

if (require.main === module) {
  const files = buildClient();
  const version = (
    JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as { version: string }
  ).version;
  console.log(`@ratelimit/client ${version}: ${files.length} files in libs/client/dist`);
}
