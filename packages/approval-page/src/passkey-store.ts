/**
 * What the approval store keeps for passkeys (WebAuthn): the credentials a
 * principal registered, the pending challenge of an approval, and the
 * challenges of registrations under way.
 */
import type { FormValue } from '@mrtr/wire';

/** A WebAuthn transport hint (`AuthenticatorTransport` of WebAuthn Level 3, §5.8.4). */
export type PasskeyTransport =
  | 'ble'
  | 'cable'
  | 'hybrid'
  | 'internal'
  | 'nfc'
  | 'smart-card'
  | 'usb';

/** A registered passkey (a WebAuthn public key credential), bound to one principal. */
export interface PasskeyCredential {
  /** The credential id, base64url (at most 1023 bytes, WebAuthn §4). Unique across principals. */
  id: string;
  /** The principal that registered it; only this principal's approvals accept it. */
  principal: string;
  /** The credential public key, COSE_Key (RFC 9052) bytes as base64url. */
  publicKey: string;
  /** The signature counter last seen (0 for authenticators that keep none). */
  counter: number;
  /** Transports the authenticator reported at registration (hints for the browser). */
  transports: PasskeyTransport[];
  /** When it was registered, milliseconds since the epoch. */
  createdAt: number;
}

/** The pending WebAuthn challenge of an approval, kept with it until a decision uses it. */
export interface PendingChallenge {
  /** The server random it was derived from (43 base64url characters). */
  random: string;
  /** `approvalChallenge(approval, content, random)` (43 base64url characters). */
  challenge: string;
  /** The answers the challenge commits to; a passkey approval records exactly these. */
  content: Record<string, FormValue>;
  /** When the challenge stops being accepted, milliseconds since the epoch (never after the approval's). */
  expiresAt: number;
}

/** What {@link ApprovalStore.setChallenge} is asked to keep. */
export interface ChallengeRequest {
  /** The approval id. */
  id: string;
  /** The principal signed in on the page; must equal the approval's. */
  principal: string;
  /** A fresh server random (43 base64url characters, `newRandom()`). */
  random: string;
  /** The answers to the approval's `requestedSchema` (validated against it); `{}` for none. */
  content: Record<string, FormValue>;
  /** When the challenge expires, milliseconds since the epoch; capped at the approval's expiry. */
  expiresAt: number;
}

/** A registration ceremony under way: its challenge, for whom, until when. */
export interface RegistrationChallenge {
  /** The challenge sent in the creation options (base64url). */
  challenge: string;
  /** The principal registering. */
  principal: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * The passkey records of an approval store, shared by every instance.
 * Every method throws `ApprovalStoreUnavailableError` when the store cannot
 * be reached (nothing changed) and `TypeError` for malformed input (nothing
 * changed).
 */
export interface PasskeyStore {
  /**
   * Register a credential.
   * @returns `true` when added; `false` when a credential with this id is
   *   already registered (to anyone), which is left as it was.
   */
  addCredential(credential: PasskeyCredential): Promise<boolean>;
  /** The credential with `id`, or `undefined`. */
  getCredential(id: string): Promise<PasskeyCredential | undefined>;
  /** The credentials of `principal`, oldest first (at most 100). */
  listCredentials(principal: string): Promise<PasskeyCredential[]>;
  /**
   * Set a credential's signature counter to `to` only if it is still `from`
   * (compare-and-set), so two uses of one counter value cannot both pass.
   * @returns whether it was set.
   */
  updateCredentialCounter(id: string, from: number, to: number): Promise<boolean>;
  /**
   * Forget the credential `id` of `principal`.
   * @returns whether it existed and belonged to `principal` (another principal's is left alone).
   */
  deleteCredential(id: string, principal: string): Promise<boolean>;
  /** Keep a registration challenge under `key` (43 base64url characters), replacing any before it. */
  putRegistrationChallenge(key: string, challenge: RegistrationChallenge): Promise<void>;
  /**
   * Take the registration challenge under `key`: read and delete it in one
   * atomic step, so it is used at most once.
   * @returns it, or `undefined` when there is none or it has expired.
   */
  takeRegistrationChallenge(key: string): Promise<RegistrationChallenge | undefined>;
}
