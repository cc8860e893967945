/**
 * `readForm` reads a form body only as what it says it is: URL-encoded
 * UTF-8, not coded. A body declared gzip or UTF-16 would be read as UTF-8
 * text as it stands, so it is not read at all (the page answers "the form
 * could not be read", as `/mcp` answers such bodies 415).
 */
import { describe, expect, it } from 'vitest';
import { readForm } from '../src/http.js';

const post = (headers: Record<string, string>, body = 'a=1&b=%C3%A9') =>
  new Request('http://127.0.0.1/approve/x', { method: 'POST', headers, body });
const FORM = 'application/x-www-form-urlencoded';

describe('readForm', () => {
  it('reads URL-encoded UTF-8, with or without a charset, uncoded or identity', async () => {
    const accepted: Record<string, string>[] = [
      { 'content-type': FORM },
      { 'content-type': `${FORM}; charset=UTF-8` },
      { 'content-type': `${FORM};charset="utf8"` },
      { 'content-type': FORM, 'content-encoding': 'identity' },
      // Percent-encoded ASCII is the same text in UTF-8.
      { 'content-type': `${FORM}; charset=us-ascii` },
    ];
    for (const headers of accepted) {
      const form = await readForm(post(headers));
      expect(form?.get('a'), JSON.stringify(headers)).toBe('1');
      expect(form?.get('b')).toBe('é');
    }
  });

  it('does not read a body in another charset or under a content coding', async () => {
    const refused: Record<string, string>[] = [
      { 'content-type': `${FORM}; charset=utf-16` },
      { 'content-type': `${FORM}; charset=iso-8859-1` },
      { 'content-type': FORM, 'content-encoding': 'gzip' },
      { 'content-type': FORM, 'content-encoding': 'identity, gzip' },
      { 'content-type': 'text/plain' },
      // The parameter read is the charset's, not text inside another parameter's quotes.
      { 'content-type': `${FORM}; foo="; charset=utf-8"; charset=iso-8859-1` },
    ];
    for (const headers of refused)
      expect(await readForm(post(headers)), JSON.stringify(headers)).toBeUndefined();
  });
});
