import { stacksMarks, storableText } from '@mrtr/example-kit';
import { quoted } from '@mrtr/gate';

/** Longest `path` argument accepted, in UTF-16 code units. */
export const MAX_PATH_LENGTH = 1024;
/** Longest file or folder name, in UTF-8 bytes (the limit of ext4, XFS, APFS). */
export const MAX_NAME_BYTES = 255;
/**
 * A path as the server's texts show it: in double quotes, `"` and every
 * character drawn like one escaped (`quoted` of `@mrtr/gate`), whole (a path
 * is at most {@link MAX_PATH_LENGTH} characters), so that a name chosen by
 * whoever made the file reads as one name and never as the server's words.
 */
export const shownPath = (path: string): string => quoted(path, MAX_PATH_LENGTH);

/** The folder under the root where files wait between the claim and the unlink; no path may name it. */
export const TRASH_DIR = '.mrtr-trash';

/** Slashes NFKC leaves alone: division, fraction, big and set-minus slashes, box-drawing diagonals. */
const SLASH_LIKE = /[\u2044\u2215\u2216\u2571\u2572\u29F5\u29F8\u29F9\uFE68]/;

/**
 * Why `path` is not a name this server will look up, or `undefined` when it
 * is one. The rules, checked on the text alone before the file system is
 * touched (each is one line of the README):
 *
 * - relative to the files root: no leading `/`, `\` or drive letter;
 * - folders separated by `/` only; no empty name (`a//b`, a trailing `/`),
 *   no `.` or `..`;
 * - taken literally: percent-encoding (`%2e%2e%2f`) is refused, never decoded;
 * - no control characters, no invisible format characters (bidi overrides,
 *   zero-width joiners), no line or paragraph separators, no private-use
 *   or unassigned code points;
 * - Unicode NFC, and unchanged by NFKC: compatibility look-alikes of `/` and
 *   `.` (`／`, `․`, `‥`), fullwidth letters and ligatures are refused, never
 *   normalized into another name; so are the slashes NFKC keeps (`∕`, `⁄`, `⧸`);
 * - no name that starts or ends with a space, none over 255 UTF-8 bytes,
 *   none equal to `.mrtr-trash` in any case.
 */
export function pathProblem(path: string): string | undefined {
  if (/^[/\\]/.test(path) || /^[A-Za-z]:/.test(path))
    return 'must be relative to the files root (no leading / or drive letter)';
  if (path.includes('\\')) return 'separates folders with /, never \\';
  if (/%[0-9A-Fa-f]{2}/.test(path))
    return 'is taken literally and never URL-decoded: percent-encoding (%2e, %2f, …) is refused';
  // Default-ignorable code points (Hangul fillers, variation selectors) and the blank braille
  // pattern draw nothing: two names would look the same. Private-use and unassigned code points
  // may draw as nothing too, and the gate's question shows them as U+FFFD, which no one can type.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/u.test(path))
    return 'contains a control, private-use, unassigned or invisible formatting character';
  // A stack of combining marks (NFC keeps what has no composed form) draws over the question's lines.
  if (stacksMarks(path)) return 'stacks more than 4 combining marks on one character';
  if (path.normalize('NFC') !== path)
    return 'is not in Unicode NFC form: type it composed (é as one character, not e and an accent)';
  if (SLASH_LIKE.test(path)) return 'contains a character that looks like / or \\';
  if (path.normalize('NFKC') !== path)
    return 'contains a compatibility look-alike character (such as ／ for / or ․ for .), refused rather than read as another name';
  for (const name of path.split('/')) {
    if (name === '') return 'has an empty folder name (// or a trailing /)';
    if (name === '.' || name === '..') return 'contains . or .. (paths stay inside the root)';
    if (name.trim() !== name) return 'has a name that starts or ends with a space';
    if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES)
      return `has a name longer than ${MAX_NAME_BYTES} UTF-8 bytes`;
    if (name.toLowerCase() === TRASH_DIR) return `names ${TRASH_DIR}, which the server keeps`;
  }
  return undefined;
}

/**
 * The `path` argument of `delete_file`: text PostgreSQL can store (no NUL,
 * no lone surrogate), at most {@link MAX_PATH_LENGTH} characters, and every
 * rule of {@link pathProblem}; refused with `-32602` naming the argument.
 */
export const PathArgument = storableText(MAX_PATH_LENGTH)
  .superRefine((path, ctx) => {
    const problem = pathProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('Path of the file, relative to the files root, with / between folders');
