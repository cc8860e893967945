/**
 * The claims a confirmation ticket carries. Times are Unix seconds. `sub`,
 * `iat` and `exp` are named as in RFC 7519 (JWT) §4.1.
 */
export interface TicketClaims<Data = unknown> {
  /** Subject: the authenticated principal the ticket was minted for. */
  sub: string;
  /** Operation: the method and target name, e.g. `tools/call:notes_delete`. */
  op: string;
  /** `sha256:…` digest of the RFC 8785 canonical arguments (see `@mrtr/digest`). */
  argsDigest: string;
  /** The `inputRequests` key whose answer this ticket waits for. */
  inputKey: string;
  /** Phase of the operation the ticket belongs to, e.g. `confirm`. */
  phase: string;
  /**
   * 128 random bits as 22 base64url characters: the single-use identity of
   * the ticket, claimed once in a replay store. (Not the AEAD nonce, which
   * is internal to the sealed form.)
   */
  nonce: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expires at, Unix seconds. */
  exp: number;
  /**
   * `sha256:…` digest (as made by `@mrtr/digest`) of the question the person
   * was shown, so a retry can tell whether the live data still asks the same.
   * Sealed as its 32 bytes.
   */
  questionDigest?: string;
  /** Opaque id of a URL-mode approval: 16 bytes as 22 base64url characters. */
  approvalId?: string;
  /** Candidate ids shown to the person, when the caller seals them. */
  candidates?: string[];
  /** Application data sealed with the claims, as JSON (kept small: it travels in every retry). */
  data?: Data;
}

/** The claims a caller supplies to `seal`; the sealer adds `nonce`, `iat` and `exp`. */
export type TicketClaimsInput<Data = unknown> = Omit<TicketClaims<Data>, 'nonce' | 'iat' | 'exp'>;

/**
 * What the retry itself establishes, given to `open`: who is calling, which
 * operation, and the digest of the arguments it carries. A ticket opens only
 * for the binding it was sealed with: `op` and `argsDigest` are AEAD
 * associated data (a difference fails the tag: `mac`); `sub` travels sealed
 * and is compared after decryption (a difference is `principal`).
 */
export interface TicketBinding {
  /** The authenticated principal of the request presenting the ticket. */
  sub: string;
  /** `method:name` of the request presenting the ticket. */
  op: string;
  /** Digest of the arguments of the request presenting the ticket. */
  argsDigest: string;
}
