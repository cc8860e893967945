/** A ticket key of `@mrtr/ticket`: its id, and its master secret (at least 32 bytes). */
export interface TicketKeyOption {
  kid: string;
  secret: Uint8Array | string;
}

/** How an example server is given its ticket keys. */
export interface TicketKeyOptions {
  /** The master secret that seals new tickets (and opens them), at least 32 bytes. */
  secret: Uint8Array | string;
  /** The key id of `secret` (default `k1`): a ticket names the key it was sealed with. */
  secretKid?: string | undefined;
  /**
   * A key that opens tickets but seals none: the key being retired (tickets
   * sealed before the switch still open until they expire), or the one being
   * introduced (every instance opens it before any seals with it). See the
   * example kit's README, "Rotating the ticket key".
   */
  openKey?: TicketKeyOption | undefined;
}

/**
 * The key ring of `TicketSealer` (`@mrtr/ticket`) for {@link TicketKeyOptions}:
 * `secret` under `secretKid` first (it seals), then `openKey`.
 * @returns `[{ kid, secret }, …]`; the sealer checks kids and secrets (`TicketConfigError`).
 */
export function ticketKeys(options: TicketKeyOptions): TicketKeyOption[] {
  const keys: TicketKeyOption[] = [{ kid: options.secretKid ?? 'k1', secret: options.secret }];
  if (options.openKey !== undefined) keys.push(options.openKey);
  return keys;
}
