import { quoted } from './errors.js';
/** What a person must see before consenting to open a URL-mode elicitation URL. */
export interface UrlFacts {
  /** The full URL, exactly as it will be opened (the WHATWG-parsed `href`). */
  url: string;
  /** The host to highlight (ASCII form: an internationalized name stays `xn--…`). */
  host: string;
  /** `https:` or `http:`. */
  protocol: 'https:' | 'http:';
  /** Reasons to look twice, in plain words (Punycode, plain HTTP, user info, an IP address, another site). */
  warnings: string[];
}

/** The outcome of {@link inspectUrl}. */
export type UrlInspection = { ok: true; facts: UrlFacts } | { ok: false; reason: string };

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Check a URL-mode `elicitation/create` URL and gather what a person must be
 * shown before opening it (`client/elicitation`, "Safe URL Handling": the full
 * URL, its domain highlighted, warnings for Punycode). The URL is never
 * fetched. Only `https:` and `http:` URLs can be opened.
 *
 * @param raw the `url` parameter as received
 * @param serverUrl the MCP endpoint, to warn when the URL leads to another host or port
 * @returns `{ok: true, facts}`, or `{ok: false, reason}` for a URL that must not be opened. Never throws.
 */
export function inspectUrl(raw: unknown, serverUrl: URL): UrlInspection {
  if (typeof raw !== 'string') return { ok: false, reason: 'the url is not a string' };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { ok: false, reason: 'the url is not a valid absolute URL' };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { ok: false, reason: `the url uses ${quoted(parsed.protocol)}, not https: or http:` };
  }
  const warnings: string[] = [];
  const host = parsed.hostname;
  if (host.split('.').some((label) => label.startsWith('xn--'))) {
    warnings.push(
      `the host ${host} is an internationalized (Punycode) name and may imitate another site`,
    );
  }
  if (parsed.protocol === 'http:' && !LOOPBACK.test(host)) {
    warnings.push('the URL is plain http: what you type there can be read on the network');
  }
  if (parsed.username || parsed.password) {
    warnings.push(
      'the URL carries a user name before the host, a common way to disguise the real host',
    );
  }
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[')) {
    warnings.push('the host is a bare IP address, not a name');
  }
  // Host and port: another port on the same name is another service (URL.host drops default ports).
  if (parsed.host !== serverUrl.host) {
    warnings.push(
      `the URL leads to ${parsed.host}, not to the MCP server's host ${serverUrl.host}`,
    );
  }
  return {
    ok: true,
    facts: { url: parsed.href, host, protocol: parsed.protocol, warnings },
  };
}
