/**
 * What every route of the page shares: the kit it is handed, who is signed
 * in, and the refusal pages (each says that nothing was recorded).
 */
import { MAX_MESSAGE_LENGTH } from './rules.js';
import type { PasswordSignIn, SignedIn, SignInHook } from './sign-in.js';
import type { ApprovalStore, DecideRefusal, FinalDecision } from './store.js';
import type { LayoutData } from './views.js';

/** A change to a principal's passkeys that the page is asked to make, as a {@link PasskeyRegistrationRule} sees it. */
export interface PasskeyChange {
  /** The signed-in principal whose passkeys would change. */
  principal: string;
  /** `register` a new passkey, or `remove` one. */
  action: 'register' | 'remove';
  /** How many passkeys the principal has now. */
  passkeys: number;
  /** The request asking for it (its cookies and headers, e.g. to read your own SSO session's age). */
  request: Request;
}

/** Your own rule for {@link PasskeyChange}s: `true` lets the page make the change. */
export type PasskeyRegistrationRule = (change: PasskeyChange) => boolean | Promise<boolean>;

/**
 * Who may add and remove passkeys on the page (`passkeyRegistration` of
 * `createApprovalPage`): `'first-only'`, `'open'`, or a {@link PasskeyRegistrationRule}.
 */
export type PasskeyRegistration = 'first-only' | 'open' | PasskeyRegistrationRule;

/** What the routes need from the page. */
export interface ViewKit {
  store: ApprovalStore;
  hook: SignInHook;
  origin: string;
  basePath: string;
  /** The WebAuthn relying party: its id (the origin's host) and the name shown by authenticators. */
  rp: { id: string; name: string };
  now: () => number;
  /**
   * The built-in sign-in's {@link PasswordSignIn.confirmPassword}: registering
   * a passkey asks for the page password again. Absent with a `SignInHook`,
   * whose session is all the page knows.
   */
  confirmPassword?: PasswordSignIn['confirmPassword'];
  /** Whether the page may make this change to the principal's passkeys (`passkeyRegistration`). */
  passkeyChange(change: PasskeyChange): Promise<boolean>;
  /** What every view's layout needs; `scripts` are same-origin paths (default none). */
  layout(
    title: string,
    tone: LayoutData['tone'],
    signedIn: string | null,
    scripts?: string[],
  ): LayoutData;
  notice(
    status: number,
    heading: string,
    text: string,
    signedIn?: string | null,
    link?: { href: string; text: string } | null,
  ): Response;
}

export const NOT_YOURS =
  'This approval was not requested for the principal you are signed in as, so it is not shown. Sign out and sign in as the principal your client acts for.';
export const NOTHING = 'Nothing was recorded.';
/** Answers that fit the form but are longer than a store keeps (`isContent` of `rules.ts`). */
export const TOO_LONG = `Your answers are too long to record: at most ${MAX_MESSAGE_LENGTH} characters as JSON, where a control character can count six.`;

export const utc = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** Who is signed in on `request`, through the page's sign-in hook, or `undefined`. */
export async function signedInAs(kit: ViewKit, request: Request): Promise<SignedIn | undefined> {
  const who = await kit.hook.authenticate(request);
  if (!who) return undefined;
  if (
    typeof who.principal !== 'string' ||
    typeof who.csrfSecret !== 'string' ||
    who.csrfSecret.length < 32
  )
    throw new TypeError(
      'authenticate must return a principal and a csrfSecret of at least 32 characters',
    );
  return who;
}

/** The page for a {@link DecideRefusal}: what was refused and that nothing was recorded. */
export function refused(
  kit: ViewKit,
  reason: DecideRefusal,
  who: SignedIn,
  path: string,
  decision?: FinalDecision,
) {
  const link = { href: path, text: 'Back to the request' };
  switch (reason) {
    case 'unknown':
      return missing(kit, who);
    case 'expired':
      return expired(kit, who);
    case 'principal':
      return kit.notice(403, 'Not your approval', `${NOT_YOURS} ${NOTHING}`, who.principal);
    case 'level':
      return kit.notice(
        403,
        'A passkey is required',
        `This request can only be approved with a passkey. ${NOTHING}`,
        who.principal,
        link,
      );
    case 'challenge':
      return kit.notice(
        403,
        'Refused',
        `This passkey answer was not made for this request's current challenge (another request, an older prompt, or one already used). ${NOTHING}`,
        who.principal,
        link,
      );
    case 'content':
      return kit.notice(
        400,
        'Refused',
        `The answers do not fit the question. ${NOTHING}`,
        who.principal,
        link,
      );
    case 'decided': {
      const already =
        decision?.status === 'withdrawn'
          ? 'closed in your MCP client'
          : decision?.status === 'denied'
            ? 'denied'
            : 'approved';
      return kit.notice(
        409,
        'Already decided',
        `This request was already ${already}; a decision cannot be changed. ${NOTHING}`,
        who.principal,
        link,
      );
    }
  }
}

export function missing(kit: ViewKit, who: SignedIn) {
  const text = 'There is no such approval request, or it expired and was removed.';
  return kit.notice(404, 'No such request', text, who.principal);
}

export function expired(kit: ViewKit, who: SignedIn) {
  const text = `This approval request expired. ${NOTHING} Ask your client to run the tool again for a new request.`;
  return kit.notice(410, 'This request expired', text, who.principal);
}
