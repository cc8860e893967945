/**
 * The claims a confirmation ticket carries. Times are Unix seconds.
 * Field names are short because they name wire fields of MCP `requestState`.
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
  /** Nonce: 128 random bits as 22 base64url characters; the single-use identity of the ticket. */
  n: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expires at, Unix seconds. */
  exp: number;
  /** Application data sealed with the claims, as JSON (kept small: it travels in every retry). */
  app?: App;
}

/** The claims a caller supplies to `seal`; the sealer adds `n`, `iat` and `exp`. */
export type TicketClaimsInput<App = unknown> = Omit<TicketClaims<App>, 'n' | 'iat' | 'exp'>;

/**
 * What the retry itself establishes, given to `open`: who is calling, which
 * operation, and the digest of the arguments it carries. A ticket opens only
 * for the binding it was sealed with: `op` and `ad` are AEAD associated data
 * (a difference fails the tag: `mac`); `sub` travels sealed and is compared
 * after decryption (a difference is `principal`).
 */
export interface TicketBinding {
  /** The authenticated principal of the request presenting the ticket. */
  sub: string;
  /** `method:name` of the request presenting the ticket. */
  op: string;
  /** Digest of the arguments of the request presenting the ticket. */
  ad: string;
}
