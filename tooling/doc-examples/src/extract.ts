/**
 * Finding the code examples of the documentation: the ```ts blocks of a
 * Markdown file, and the ```ts blocks of the `@example` tags of a TypeScript
 * file's doc comments.
 *
 * The info string after ```ts may carry words:
 * - `fragment`: a piece that is not meant to compile on its own; skipped.
 * - `file=<path>`: the block mirrors that file (relative to the Markdown
 *   file) and must equal it, byte for byte.
 */

/** One code example, and where it was found. */
export interface Example {
  /** The file it was found in, as given to the extractor. */
  origin: string;
  /** The 1-based line of `origin` that holds the example's first code line. */
  line: number;
  /** The code, lines joined with `\n`, with a final newline. */
  code: string;
  /** Skipped: marked `fragment`. */
  fragment: boolean;
  /** The file the block mirrors (`file=<path>`), as written. */
  mirrors?: string;
}

const FENCE_OPEN = /^(\s*)```(ts|typescript)(?:\s+(.*))?$/;
const FENCE_CLOSE = /^\s*```\s*$/;

function infoWords(info: string | undefined): { fragment: boolean; mirrors?: string } {
  const words = (info ?? '').split(/\s+/).filter(Boolean);
  const file = words.find((w) => w.startsWith('file='));
  return {
    fragment: words.includes('fragment'),
    ...(file ? { mirrors: file.slice('file='.length) } : {}),
  };
}

/**
 * The fenced TypeScript blocks of `lines`, whose first line is line `first`
 * (1-based) of `origin`. A block's indentation (a list item's) is removed.
 * @throws {Error} naming the line of a block that is never closed.
 */
function fencedBlocks(origin: string, lines: string[], first: number): Example[] {
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i] as string);
    if (!open) continue;
    const indent = (open[1] as string).length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !FENCE_CLOSE.test(lines[j] as string)) {
      body.push((lines[j] as string).slice(indent));
      j++;
    }
    if (j === lines.length)
      throw new Error(`${origin}:${first + i}: a \`\`\`ts block is never closed`);
    found.push({
      origin,
      line: first + i + 1,
      code: `${body.join('\n')}\n`,
      ...infoWords(open[3]),
    });
    i = j;
  }
  return found;
}

/** Every ```ts block of a Markdown text. */
export function markdownExamples(origin: string, text: string): Example[] {
  return fencedBlocks(origin, text.split('\n'), 1);
}

/**
 * Every ```ts block inside an `@example` tag of a doc comment (`/** … *\/`)
 * of a TypeScript text. The comment's ` * ` margin is removed; the tag's
 * block ends where the next tag or the comment does.
 */
export function docCommentExamples(origin: string, text: string): Example[] {
  const lines = text.split('\n');
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\/\*\*/.test(lines[i] as string)) continue;
    let end = i;
    while (end < lines.length && !(lines[end] as string).includes('*/')) end++;
    // The comment's lines without their margin.
    const bare = lines.slice(i, end + 1).map((l) => l.replace(/^\s*\/?\*+\/?\s?/, ''));
    for (let k = 0; k < bare.length; k++) {
      if (!/^@example\b/.test(bare[k] as string)) continue;
      let stop = k + 1;
      while (stop < bare.length && !/^@\w/.test(bare[stop] as string)) stop++;
      found.push(...fencedBlocks(origin, bare.slice(k + 1, stop), i + k + 2));
    }
    i = end;
  }
  return found;
}
