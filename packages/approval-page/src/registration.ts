/**
 * Registering passkeys (W3C Web Authentication, §7.1 "Registering a New
 * Credential", through `@simplewebauthn/server`), for the signed-in
 * principal only:
 * - `GET <basePath>/passkeys`: the principal's passkeys and "Register a passkey";
 * - `POST <basePath>/passkeys/options`: creation options (JSON), user
 *   verification required, a discoverable credential preferred, no
 *   attestation; the challenge is kept for this sign-in session, single use.
 *   Under the built-in sign-in it needs the page password again (a wrong one
 *   `401`, past the attempt limit `429`): a session cookie reaches every port
 *   of its host, and one replayed from elsewhere must not bind a passkey;
 * - `POST <basePath>/passkeys`: the new credential, verified, kept with the principal;
 * - `POST <basePath>/passkeys/remove`: forget one of the principal's passkeys.
 */

import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { generateRegistrationOptions, verifyRegistrationResponse } from '@simplewebauthn/server';
import { registrationKey, userHandle } from './challenge.js';
import { csrfToken } from './csrf.js';
import { field, html, json, seeOther } from './http.js';
import {
  type PasskeyChange,
  type PasskeyRegistration,
  signedInAs,
  utc,
  type ViewKit,
} from './kit.js';
import { admitPasskeyPost, CEREMONY_TIMEOUT_MS, CHALLENGE_TTL_MS } from './passkey.js';
import {
  assertCredential,
  CREDENTIAL_ID,
  MAX_CREDENTIALS,
  passkeyProblem,
  topLevelCeremony,
} from './passkey-rules.js';
import type { PasskeyTransport } from './passkey-store.js';
import { APPROVAL_ID } from './rules.js';
import { render } from './views.js';

/** What the CSRF tokens of the registration page's forms are bound to (never an approval id). */
export const REGISTRATION_LABEL = 'passkeys/register';

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

/**
 * `passkeyRegistration` as one check. `'first-only'`: a principal without a
 * passkey may register one; one with a passkey neither adds nor removes any
 * on the page (whoever holds a signed-in session, say a client that knows
 * the sign-in token, could otherwise swap the person's passkey for its own).
 * @throws {TypeError} for another value.
 */
export function passkeyPolicy(
  option: PasskeyRegistration | undefined,
): (change: PasskeyChange) => Promise<boolean> {
  const rule = option ?? 'first-only';
  if (rule === 'open') return async () => true;
  if (rule === 'first-only')
    return async (change) => change.action === 'register' && change.passkeys === 0;
  if (typeof rule === 'function')
    return async (change) => {
      try {
        return (await rule(change)) === true;
      } catch {
        return false; // a rule that fails allows nothing
      }
    };
  throw new TypeError(
    `passkeyRegistration must be 'first-only', 'open' or a function; got ${String(rule)}`,
  );
}

/** What the page says when `passkeyRegistration` refuses a change. */
const CLOSED =
  'This server does not let passkeys be added or removed here for your account now: ask its operator.';

/** What the passkey list says when `passkeyRegistration` lets a principal with passkeys change none (`'first-only'`). */
const KEPT =
  'Your passkeys stay as they are: this page adds and removes none once you have one. To change them, ask the operator of this server.';
/** … and when it lets them remove one but add none. */
const NO_MORE = 'This page adds no more passkeys for you now: ask the operator of this server.';

/** The approval page to return to, if `value` is one (no open redirect); else `''`. */
function returnPath(kit: ViewKit, value: string | null | undefined): string {
  const prefix = `${kit.basePath}/`;
  if (!value?.startsWith(prefix)) return '';
  return APPROVAL_ID.test(value.slice(prefix.length)) ? value : '';
}

function here(kit: ViewKit, returnTo: string, registered = false) {
  const query = new URLSearchParams();
  if (returnTo) query.set('return', returnTo);
  if (registered) query.set('registered', '1');
  const q = query.toString();
  return `${kit.basePath}/passkeys${q ? `?${q}` : ''}`;
}

/** `GET <basePath>/passkeys`. */
export async function showPasskeys(kit: ViewKit, request: Request) {
  const url = new URL(request.url);
  const returnTo = returnPath(kit, url.searchParams.get('return'));
  const who = await signedInAs(kit, request);
  if (!who) return seeOther(kit.hook.signInUrl(here(kit, returnTo)));
  const passkeys = await kit.store.listCredentials(who.principal);
  const change = (action: PasskeyChange['action']) =>
    kit.passkeyChange({ principal: who.principal, action, passkeys: passkeys.length, request });
  const mayRegister = await change('register');
  const mayRemove = passkeys.length > 0 && (await change('remove'));
  const data = {
    ...kit.layout('Your passkeys', 'plain', who.principal, [
      `${kit.basePath}/assets/webauthn.js`,
      `${kit.basePath}/assets/passkey.js`,
    ]),
    principal: who.principal,
    registered:
      url.searchParams.get('registered') === '1'
        ? `Your passkey is registered.${returnTo ? ' Go back to the request to approve it.' : ''}`
        : null,
    passkeys: passkeys.map((p) => ({
      id: p.id,
      shortId: p.id.length > 16 ? `${p.id.slice(0, 8)}…${p.id.slice(-6)}` : p.id,
      created: utc(p.createdAt),
      createdIso: new Date(p.createdAt).toISOString(),
      transports: p.transports.length > 0 ? p.transports.join(', ') : 'not reported',
    })),
    mayRegister,
    askPassword: kit.confirmPassword !== undefined,
    mayRemove,
    // Beside a passkey just registered, "does not let" read as an error: say what is kept instead.
    closed: mayRegister ? null : passkeys.length === 0 ? CLOSED : mayRemove ? NO_MORE : KEPT,
    passkeyProblem: passkeyProblem(kit.rp.id),
    csrf: csrfToken(who.csrfSecret, REGISTRATION_LABEL),
    action: `${kit.basePath}/passkeys`,
    optionsUrl: `${kit.basePath}/passkeys/options`,
    removeAction: `${kit.basePath}/passkeys/remove`,
    returnTo,
  };
  return html(200, render('passkeys', data));
}

/**
 * `POST <basePath>/passkeys/options`: `csrf` (and `password`, the page
 * password, under the built-in sign-in) → `{ options }` or `{ error }`.
 */
export async function registrationOptions(kit: ViewKit, request: Request) {
  const admit = await admitPasskeyPost(kit, request, REGISTRATION_LABEL, true);
  if ('response' in admit) return admit.response;
  const { who, form } = admit;
  const existing = await kit.store.listCredentials(who.principal);
  const change = { principal: who.principal, action: 'register' as const, request };
  if (!(await kit.passkeyChange({ ...change, passkeys: existing.length })))
    return json(403, { error: `${CLOSED} Nothing was registered.` });
  if (existing.length >= MAX_CREDENTIALS)
    return json(409, { error: `You have ${MAX_CREDENTIALS} passkeys; remove one first.` });
  if (kit.confirmPassword) {
    // The session alone is not enough: its cookie also reaches every other port of this host.
    const confirmed = await kit.confirmPassword(who.principal, field(form, 'password') ?? '');
    if (!confirmed.ok && confirmed.retryAfter !== undefined)
      return json(
        429,
        {
          error: `Too many password attempts for ${who.principal}. Try again in ${confirmed.retryAfter} seconds. Nothing was registered.`,
        },
        { 'retry-after': String(confirmed.retryAfter) },
      );
    if (!confirmed.ok)
      return json(401, {
        error:
          'That is not your page password. Registering a passkey needs it. Nothing was registered.',
      });
  }
  const options = await generateRegistrationOptions({
    rpName: kit.rp.name,
    rpID: kit.rp.id,
    userName: who.principal,
    userDisplayName: who.principal,
    userID: userHandle(who.principal),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
  });
  await kit.store.putRegistrationChallenge(registrationKey(who.csrfSecret), {
    challenge: options.challenge,
    principal: who.principal,
    expiresAt: kit.now() + CHALLENGE_TTL_MS,
  });
  return json(200, { options });
}

function registrationOf(form: URLSearchParams): RegistrationResponseJSON | undefined {
  try {
    const value = JSON.parse(field(form, 'registration') ?? '') as RegistrationResponseJSON | null;
    const ok =
      value &&
      typeof value.id === 'string' &&
      CREDENTIAL_ID.test(value.id) &&
      value.rawId === value.id &&
      value.type === 'public-key' &&
      typeof value.response?.clientDataJSON === 'string' &&
      typeof value.response?.attestationObject === 'string';
    return ok ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `POST <basePath>/passkeys`: `csrf`, `registration` (JSON), `return` → `303` to the list, or a refusal. */
export async function register(kit: ViewKit, request: Request) {
  const admit = await admitPasskeyPost(kit, request, REGISTRATION_LABEL, false);
  if ('response' in admit) return admit.response;
  const { who, form } = admit;
  const returnTo = returnPath(kit, field(form, 'return'));
  const no = (status: number, text: string) =>
    kit.notice(status, 'Not registered', `${text} Nothing was registered.`, who.principal, {
      href: here(kit, returnTo),
      text: 'Back to your passkeys',
    });
  const change = (passkeys: number) =>
    kit.passkeyChange({ principal: who.principal, action: 'register', passkeys, request });
  const before = (await kit.store.listCredentials(who.principal)).length;
  if (!(await change(before))) return no(403, CLOSED);
  const response = registrationOf(form);
  if (!response) return no(400, 'The passkey answer could not be read.');
  if (!topLevelCeremony(response.response.clientDataJSON))
    return no(403, 'The passkey was refused: it was not made on this page itself.');
  const pending = await kit.store.takeRegistrationChallenge(registrationKey(who.csrfSecret));
  if (!pending || pending.principal !== who.principal)
    return no(403, 'This registration was not started here, already finished, or expired.');
  let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo'];
  try {
    const verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: pending.challenge,
      expectedOrigin: kit.origin,
      expectedRPID: kit.rp.id,
      requireUserVerification: true,
    });
    info = verified.verified ? verified.registrationInfo : undefined;
  } catch {
    // The library's message may quote the expected challenge or its own internals: a fixed text.
    return no(
      403,
      'The passkey was refused: its answer does not verify for this registration (another or an old challenge, origin or authenticator data).',
    );
  }
  if (!info?.userVerified)
    return no(403, 'The passkey was refused: user verification is required.');
  // Transports are hints the client reports, unsigned: keep only known names from a list.
  const reported: unknown = info.credential.transports ?? response.response.transports;
  const transports = (Array.isArray(reported) ? reported : []).filter(
    (t): t is PasskeyTransport => typeof t === 'string' && TRANSPORTS.has(t),
  );
  // The library keeps the id of the authenticator data and never compares it with the posted one.
  if (info.credential.id !== response.id)
    return no(400, 'The passkey answer names another credential than its authenticator data.');
  const credential = {
    id: info.credential.id,
    principal: who.principal,
    publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: [...new Set(transports)],
    createdAt: kit.now(),
  };
  try {
    assertCredential(credential);
  } catch {
    // A key longer than the store keeps (the id is bounded above: the posted one, checked, equals it).
    return no(400, 'The passkey cannot be kept here: its public key is too long.');
  }
  const added = await kit.store.addCredential(credential);
  if (!added) return no(409, 'This passkey is already registered.');
  // Two registrations that both started before either was kept: the rule is asked again with
  // the passkeys this one did not see, and a refusal takes it back.
  const now = (await kit.store.listCredentials(who.principal)).length;
  if (now > before + 1 && !(await change(now - 1))) {
    await kit.store.deleteCredential(info.credential.id, who.principal);
    return no(409, `Another passkey was registered for ${who.principal} meanwhile. ${CLOSED}`);
  }
  return seeOther(here(kit, returnTo, true));
}

/** `POST <basePath>/passkeys/remove`: `csrf`, `id` → `303` to the list. */
export async function removePasskey(kit: ViewKit, request: Request) {
  const admit = await admitPasskeyPost(kit, request, REGISTRATION_LABEL, false);
  if ('response' in admit) return admit.response;
  const { who, form } = admit;
  const id = field(form, 'id');
  const returnTo = returnPath(kit, field(form, 'return'));
  const passkeys = (await kit.store.listCredentials(who.principal)).length;
  if (!(await kit.passkeyChange({ principal: who.principal, action: 'remove', passkeys, request })))
    return kit.notice(403, 'Not removed', `${CLOSED} Nothing was removed.`, who.principal, {
      href: here(kit, returnTo),
      text: 'Back to your passkeys',
    });
  if (
    id === undefined ||
    !CREDENTIAL_ID.test(id) ||
    !(await kit.store.deleteCredential(id, who.principal))
  )
    return kit.notice(
      404,
      'No such passkey',
      'You have no passkey with this id. Nothing was removed.',
      who.principal,
      {
        href: here(kit, returnTo),
        text: 'Back to your passkeys',
      },
    );
  return seeOther(here(kit, returnTo));
}
