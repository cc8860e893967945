/*
 * Approving with a passkey (W3C Web Authentication, §7.2 "Verifying an
 * Authentication Assertion", through `@simplewebauthn/server`):
 * - `POST <basePath>/<id>/passkey-options`: a fresh challenge that commits to
 *   this approval and the answers posted with it, kept with the approval,
 *   and the request options for `navigator.credentials.get` (JSON);
 * - `POST <basePath>/<id>/passkey`: the assertion, verified against that
 *   challenge, this origin and RP ID, with user verification, by a
 *   credential of the approval's principal; then the decision, once.
 */

import { validateFormContent } from '@mrtr/wire';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import {
  generateAuthenticationOptions,
  verifyAuthenticationResponse,
} from '@simplewebauthn/server';
import { approvalChallenge, newRandom, userHandle } from './challenge.js';
import { csrfValid } from './csrf.js';
import { readContent } from './fields.js';
import {
  field,
  fromOrigin,
  json,
  MAX_PASSKEY_FORM_BYTES,
  originHint,
  readForm,
  seeOther,
} from './http.js';
import {
  expired,
  missing,
  NOT_YOURS,
  NOTHING,
  refused,
  signedInAs,
  TOO_LONG,
  type ViewKit,
} from './kit.js';
import { CREDENTIAL_ID, topLevelCeremony } from './passkey-rules.js';
import { isContent } from './rules.js';
import type { SignedIn } from './sign-in.js';
import { visible } from './visible.js';

/** How long a passkey challenge is accepted, milliseconds (capped at the approval's expiry). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** How long the browser waits for the authenticator, milliseconds (WebAuthn `timeout`). */
export const CEREMONY_TIMEOUT_MS = 120_000;

const B64URL = /^[A-Za-z0-9_-]*$/;

/** A JSON refusal for the page's script: it shows `error` and submits nothing. */
const refuse = (status: number, error: string) => json(status, { error: `${error} ${NOTHING}` });

/**
 * The form of a passkey POST, read after the origin, sign-in and CSRF checks,
 * or the response that refuses it.
 */
async function admitted(
  kit: ViewKit,
  request: Request,
  label: string,
  asJson: boolean,
): Promise<{ who: SignedIn; form: URLSearchParams } | { response: Response }> {
  const no = (status: number, text: string) => ({
    response: asJson ? refuse(status, text) : kit.notice(status, 'Refused', `${text} ${NOTHING}`),
  });
  if (!fromOrigin(request, kit.origin))
    return no(403, `This request did not come from this page. ${originHint(request, kit.origin)}`);
  const who = await signedInAs(kit, request);
  if (!who) return no(401, 'You are not signed in.');
  const form = await readForm(request, MAX_PASSKEY_FORM_BYTES);
  if (!form) return no(400, 'The form could not be read.');
  if (!csrfValid(who.csrfSecret, label, field(form, 'csrf')))
    return no(403, 'This form is stale or did not come from your session; reload the page.');
  return { who, form };
}

export { admitted as admitPasskeyPost };

/** `POST <basePath>/<id>/passkey-options`: `csrf` and the question's fields → `{ options }` or `{ error }`. */
export async function passkeyOptions(kit: ViewKit, request: Request, id: string) {
  const admit = await admitted(kit, request, id, true);
  if ('response' in admit) return admit.response;
  const { who, form } = admit;
  const stored = await kit.store.get(id);
  if (!stored) return refuse(404, 'There is no such approval request.');
  const { approval } = stored;
  if (approval.principal !== who.principal) return refuse(403, NOT_YOURS);
  if (stored.decision) return refuse(409, 'This request was already decided.');
  if (approval.expiresAt <= kit.now()) return refuse(410, 'This approval request expired.');
  const credentials = await kit.store.listCredentials(who.principal);
  if (credentials.length === 0) return refuse(409, 'You have no passkey registered.');
  const posted = readContent(approval.requestedSchema, form);
  if (approval.requestedSchema && !posted.current)
    return refuse(
      400,
      'This page was made by another version of the server: reload it, check your answers and approve again.',
    );
  const content = posted.content;
  const schema = approval.requestedSchema ?? { type: 'object' as const, properties: {} };
  const valid = validateFormContent(schema, content);
  const issues = [
    ...Object.entries(posted.unreadable).map(([field, reason]) => ({ field, reason })),
    ...(valid.ok ? [] : valid.issues),
  ];
  if (issues.length > 0)
    return refuse(
      400,
      // Shown by the page's script: a field name with a bidi control must not reorder the line.
      visible(
        `Some answers do not fit the question: ${issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}.`,
      ),
    );
  // What fits the form can still be more than a store keeps (raw control bytes grow sixfold as JSON).
  if (!isContent(content)) return refuse(400, TOO_LONG);
  const random = newRandom();
  const expiresAt = kit.now() + CHALLENGE_TTL_MS;
  const set = await kit.store.setChallenge({
    id,
    principal: who.principal,
    random,
    content,
    expiresAt,
  });
  if (set.status === 'refused') return refuse(409, `The challenge was refused (${set.reason}).`);
  const options = await generateAuthenticationOptions({
    rpID: kit.rp.id,
    challenge: Buffer.from(set.challenge.challenge, 'base64url'),
    allowCredentials: credentials.map((c) => ({ id: c.id, transports: c.transports })),
    userVerification: 'required',
    timeout: CEREMONY_TIMEOUT_MS,
  });
  return json(200, { options });
}

/** The assertion in the form, in the shape `verifyAuthenticationResponse` takes, or `undefined`. */
function assertionOf(form: URLSearchParams): AuthenticationResponseJSON | undefined {
  let value: unknown;
  try {
    value = JSON.parse(field(form, 'assertion') ?? '');
  } catch {
    return undefined;
  }
  const a = value as Partial<AuthenticationResponseJSON> | null;
  const r = a?.response as Record<string, unknown> | undefined;
  const b64 = (v: unknown) => typeof v === 'string' && B64URL.test(v);
  if (
    !a ||
    typeof a.id !== 'string' ||
    !CREDENTIAL_ID.test(a.id) ||
    a.rawId !== a.id ||
    a.type !== 'public-key' ||
    !r ||
    !b64(r.clientDataJSON) ||
    !b64(r.authenticatorData) ||
    !b64(r.signature) ||
    (r.userHandle !== undefined && !b64(r.userHandle))
  )
    return undefined;
  return a as AuthenticationResponseJSON;
}

/** `POST <basePath>/<id>/passkey`: `csrf` and `assertion` (JSON) → `303` back to the page, or a refusal. */
export async function approveWithPasskey(kit: ViewKit, request: Request, id: string, path: string) {
  const admit = await admitted(kit, request, id, false);
  if ('response' in admit) return admit.response;
  const { who } = admit;
  const no = (status: number, text: string) =>
    kit.notice(status, 'Refused', `${text} ${NOTHING}`, who.principal, {
      href: path,
      text: 'Back to the request',
    });
  const assertion = assertionOf(admit.form);
  if (!assertion) return no(400, 'The passkey answer could not be read.');
  const stored = await kit.store.get(id);
  if (!stored) return missing(kit, who);
  const { approval } = stored;
  if (approval.principal !== who.principal)
    return kit.notice(403, 'Not your approval', `${NOT_YOURS} ${NOTHING}`, who.principal);
  if (stored.decision) return refused(kit, 'decided', who, path, stored.decision);
  if (approval.expiresAt <= kit.now()) return expired(kit, who);
  const pending = stored.challenge;
  if (!pending || pending.expiresAt <= kit.now()) return refused(kit, 'challenge', who, path);
  // Re-derive what the assertion must have signed from the approval itself.
  const expected = approvalChallenge({
    ...approval,
    content: pending.content,
    random: pending.random,
  });
  if (expected !== pending.challenge) return refused(kit, 'challenge', who, path);
  const credential = await kit.store.getCredential(assertion.id);
  if (!credential || credential.principal !== approval.principal)
    return no(403, `This passkey is not registered to ${approval.principal}.`);
  if (!topLevelCeremony(assertion.response.clientDataJSON))
    return no(403, 'The passkey answer was refused: it was not given on this page itself.');
  // The UV flag (WebAuthn §6.1, bit 2 of the flags after the 32-byte RP ID hash), read first so
  // the refusal can say why; the library checks it again with the signature.
  const flags = Buffer.from(assertion.response.authenticatorData, 'base64url')[32];
  if (flags === undefined || (flags & 0x04) === 0)
    return no(403, 'The passkey answer was refused: user verification is required.');
  const handle = assertion.response.userHandle;
  if (handle && handle !== Buffer.from(userHandle(approval.principal)).toString('base64url'))
    return no(403, `This passkey was made for another account than ${approval.principal}.`);
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response: assertion,
      expectedChallenge: expected,
      expectedOrigin: kit.origin,
      expectedRPID: kit.rp.id,
      credential: {
        id: credential.id,
        publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')),
        counter: credential.counter,
        transports: credential.transports,
      },
      requireUserVerification: true,
    });
  } catch {
    // The library's message may quote the expected challenge: the person gets a fixed text.
    return no(
      403,
      'The passkey answer was refused: it does not verify for this approval (another or an old challenge, origin or key).',
    );
  }
  const info = verified.authenticationInfo;
  // The library answers `verified: false`, without throwing, for a signature that does not verify.
  if (!verified.verified)
    return no(
      403,
      'The passkey answer was refused: its signature does not verify with the passkey it names (another key, or an altered answer).',
    );
  if (!info.userVerified)
    return no(403, 'The passkey answer was refused: user verification is required.');
  if (
    !(await kit.store.updateCredentialCounter(credential.id, credential.counter, info.newCounter))
  )
    return no(
      403,
      'The passkey answer was refused: its signature counter went backwards (a replay, or a cloned authenticator).',
    );
  const result = await kit.store.decide({
    id,
    principal: who.principal,
    outcome: 'approved',
    via: 'passkey',
    credentialId: credential.id,
    challenge: expected,
  });
  if (result.status === 'recorded') return seeOther(path);
  return refused(kit, result.reason, who, path, result.decision);
}
