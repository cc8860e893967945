/**
 * CSRF tokens of the decision form (OWASP "synchronizer token" pattern): the
 * secret lives in the server-side session and never leaves it; each form
 * carries HMAC-SHA256(secret, approval id), so a token is bound to one
 * session and one approval and is checked in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const CONTEXT = 'mrtr-approval-page/csrf/v1\0';

/** The token a decision form for approval `id` carries in a session with `secret` (base64url, 43 characters). */
export function csrfToken(secret: string, id: string): string {
  return createHmac('sha256', secret)
    .update(CONTEXT + id)
    .digest('base64url');
}

/** Whether `token` is the session's token for approval `id`, compared in constant time. */
export function csrfValid(secret: string, id: string, token: string | undefined): boolean {
  if (typeof token !== 'string') return false;
  const expected = Buffer.from(csrfToken(secret, id));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
