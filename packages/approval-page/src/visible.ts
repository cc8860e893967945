/**
 * Text the page shows comes from the MCP server's question, its form and
 * its principals: a character that reorders text (the bidi overrides and
 * isolates of Trojan Source, CVE-2021-42574), hides it (zero-width and
 * other default-ignorable characters, the BOM) or is a control would make
 * the person read something other than what the request says. HTML escaping
 * leaves such characters as they are; these functions show each as its
 * code, `\u{202e}`, as the terminal client `mrtr` does.
 */
import { STRAY_JOINER } from '@mrtr/wire';

/**
 * Every control (`Cc`) but tab and line breaks, every format character
 * (`Cf`), every other default-ignorable code point, the line and paragraph
 * separators, lone surrogates, private-use (`Co`) and unassigned (`Cn`)
 * code points (a font draws them blank, as a box, or as a glyph of its own,
 * so `prod\u{e000}-db` could read as `prod-db`; the terminal client `mrtr`
 * shows them as codes too); not the zero-width joiner and non-joiner
 * nor the variation selectors U+FE00–U+FE0F, which emoji and several
 * scripts need to read right and which reorder nothing: those are shown as
 * codes only where they join nothing (`STRAY_JOINER` of `@mrtr/wire`). The
 * other variation selectors (U+E0100 on, Mongolian's) are codes always.
 */
const UNSAFE =
  /(?![\t\n\r]|\u200c|\u200d|[\ufe00-\ufe0f])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * `text` with every character that could reorder, hide or act shown as its
 * code point (`\u{202e}`); any other character as it is.
 */
export function visible(text: string): string {
  const code = (c: string) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`;
  // A joiner or variation selector that joins nothing draws nothing: shown as its code too.
  return text.replace(UNSAFE, code).replace(STRAY_JOINER, code);
}

/**
 * Members whose strings go into attributes the page submits or follows and
 * must stay exact (a token, a URL, an input's name or id, an input's or an
 * option's value, an ISO date): an answer must be what the question allows,
 * and a person's own input is sent back as typed. A text input's value is
 * shown in its box as it is; its view spells out what does not show
 * (`valueCodes`). Nothing else of a view may use these names.
 */
const EXACT = new Set([
  'action',
  'basePath',
  'createdIso',
  'csrf',
  'expiresIso',
  'formLayout',
  'href',
  'id',
  'inputType',
  'name',
  'optionsUrl',
  'passkeysUrl',
  'principalValue',
  'register',
  'removeAction',
  'returnTo',
  'scripts',
  'signOutUrl',
  'tone',
  'value',
]);

/**
 * A copy of the data of a view with every string it shows passed through
 * {@link visible}, and whether any changed. Strings under {@link EXACT}
 * members are kept as they are.
 * @param data the plain objects, arrays and scalars a view renders.
 */
export function visibleData<T>(data: T): { data: T; changed: boolean } {
  let changed = false;
  const walk = (value: unknown, key: string | undefined): unknown => {
    if (typeof value === 'string') {
      if (key !== undefined && EXACT.has(key)) return value;
      const shown = visible(value);
      if (shown !== value) changed = true;
      return shown;
    }
    if (Array.isArray(value)) return value.map((item) => walk(item, key));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value)) out[name] = walk(member, name);
    return out;
  };
  return { data: walk(data, undefined) as T, changed };
}
