/**
 * The claims a confirmation ticket carries. Times are Unix seconds.
 * Field names are short because every byte travels twice over the wire.
 */
export interface TicketClaims<App = unknown> {
  /** Subject: the authenticated principal the ticket was minted for. */
  sub: string;
  /** Operation: the method and target name, e.g. `tools/call:notes_delete`. */
  op: string;
  /** Argument digest: `sha256:…` of the canonical arguments (see `@mrtr/digest`). */
  ad: string;
  /** The `inputRequests` key whose answer this ticket waits for. */
  key: string;
  /** Candidate ids shown to the person; an answer must choose among them. */
  cand?: string[];
  /** Phase of the operation the ticket belongs to, e.g. `confirm`. */
  ph: string;
  /** Nonce: at least 128 random bits, base64url; the single-use identity of the ticket. */
  n: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expires at, Unix seconds. */
  exp: number;
  /** Application data sealed with the claims (kept small: it travels in every retry). */
  app?: App;
}

/** The claims a caller supplies; the sealer adds `n`, `iat` and `exp`. */
export type TicketClaimsInput<App = unknown> = Omit<TicketClaims<App>, 'n' | 'iat' | 'exp'>;

/** Structural check of decrypted claims; a ticket whose claims fail it is `malformed`. */
export function isTicketClaims(v: unknown): v is TicketClaims {
  if (v === null || typeof v !== 'object') return false;
  const c = v as Record<string, unknown>;
  const str = (x: unknown) => typeof x === 'string';
  const int = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x);
  return (
    str(c.sub) &&
    str(c.op) &&
    str(c.ad) &&
    str(c.key) &&
    str(c.ph) &&
    str(c.n) &&
    int(c.iat) &&
    int(c.exp) &&
    (c.cand === undefined || (Array.isArray(c.cand) && c.cand.every(str)))
  );
}
