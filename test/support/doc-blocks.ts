/**
 * Reading the code blocks of a Markdown page that are copies of files: a block is marked with an
 * HTML comment naming the file on the line before its fence (or the one before that, over a blank line), e.g.
 * `<!-- examples/calling/raw-nats.ts -->` then a fenced ts block holding the file exactly. A block
 * marked `<!-- excerpt of <file> <file>... -->` holds lines of those files, and comments of its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const repoRoot = join(__dirname, '..', '..');

export interface DocBlock {
  /** The file the block copies (relative to the repository root), or undefined when unmarked. */
  readonly file: string | undefined;
  /** Every file its marker names (an excerpt may name several). */
  readonly files: readonly string[];
  /** What the block copies it as: `copy` (the whole file) or `excerpt` (lines of it, in order). */
  readonly kind: 'copy' | 'excerpt' | undefined;
  readonly lang: string;
  /** The block's text, ending with a newline as a file does. */
  readonly text: string;
  /** 1-based line of the opening fence, for messages. */
  readonly line: number;
}

const marker = /^<!-- (excerpt of )?(\S+(?: \S+)*) -->$/;
const fence = /^```(\S*)$/;

/** Every fenced block of the page, with the file its marker names. */
export function docBlocks(page: string): DocBlock[] {
  const lines = readFileSync(join(repoRoot, page), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i] ?? '');
    if (open === null) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block is not closed`);
    // Prettier keeps a blank line between the marker and the fence.
    const before = lines[i - 1] === '' ? lines[i - 2] : lines[i - 1];
    const marked = marker.exec(before ?? '');
    blocks.push({
      file: marked?.[2],
      files: marked?.[2]?.split(' ') ?? [],
      kind: marked === null ? undefined : marked[1] !== undefined ? 'excerpt' : 'copy',
      lang: open[1] ?? '',
      text: lines.slice(i + 1, end).join('\n') + '\n',
      line: i + 1,
    });
    i = end;
  }
  return blocks;
}

export function readRepoFile(file: string): string {
  return readFileSync(join(repoRoot, file), 'utf8');
}

/**
 * The lines of `excerpt` found in none of `files` (none: a true excerpt), compared without their
 * indentation. Comment lines (`//`, `#`) are the excerpt's own words and are not looked for.
 */
export function linesNotIn(excerpt: string, files: readonly string[]): string[] {
  const source = new Set(
    files.flatMap((f) =>
      readRepoFile(f)
        .split('\n')
        .map((l) => l.trim()),
    ),
  );
  return excerpt
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('//') && !l.startsWith('#'))
    .filter((l) => !source.has(l));
}
