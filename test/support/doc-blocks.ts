/**
 * Reading the code blocks of a Markdown page that are copies of files: a block is marked with an
 * HTML comment naming the file on the line before its fence, e.g.
 * `<!-- examples/calling/raw-nats.ts -->` then a fenced ts block holding the file exactly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const repoRoot = join(__dirname, '..', '..');

export interface DocBlock {
  /** The file the block copies (relative to the repository root), or undefined when unmarked. */
  readonly file: string | undefined;
  /** What the block copies it as: `copy` (the whole file) or `excerpt` (lines of it, in order). */
  readonly kind: 'copy' | 'excerpt' | undefined;
  readonly lang: string;
  /** The block's text, ending with a newline as a file does. */
  readonly text: string;
  /** 1-based line of the opening fence, for messages. */
  readonly line: number;
}

const marker = /^<!-- (excerpt of )?(\S+) -->$/;
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
    const marked = marker.exec(lines[i - 1] ?? '');
    blocks.push({
      file: marked?.[2],
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

/** The lines of `excerpt` that are not found in `text` in the same order (none: a true excerpt). */
export function linesNotInOrder(excerpt: string, text: string): string[] {
  const source = text.split('\n').map((l) => l.trim());
  const missing: string[] = [];
  let at = 0;
  for (const line of excerpt.split('\n').map((l) => l.trim())) {
    if (line === '') continue;
    const found = source.indexOf(line, at);
    if (found < 0) missing.push(line);
    else at = found + 1;
  }
  return missing;
}
