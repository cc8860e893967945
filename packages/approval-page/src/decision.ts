/**
 * The two routes of one approval: the page (GET) and its decision (POST).
 * Both first find out who is signed in; neither shows nor records anything
 * for anyone but the approval's principal.
 */
import type { PendingApproval } from '@mrtr/gate';
import { validateFormContent } from '@mrtr/wire';
import { csrfToken, csrfValid } from './csrf.js';
import { FORM_LAYOUT, fieldViews, optionsOf, readContent } from './fields.js';
import { field, fromOrigin, html, originHint, readForm, seeOther } from './http.js';
import {
  expired,
  missing,
  NOT_YOURS,
  NOTHING,
  refused,
  signedInAs,
  TOO_LONG,
  utc,
  type ViewKit,
} from './kit.js';
import { passkeyProblem } from './passkey-rules.js';
import { isContent } from './rules.js';
import type { SignedIn } from './sign-in.js';
import type { FinalDecision } from './store.js';
import { render } from './views.js';

/**
 * How long an approval has left, rounded down past the first two minutes:
 * a person who reads "in 5 minutes" must not find it expired after four and
 * a half.
 */
export function timeLeft(ms: number): string {
  if (ms <= 0) return 'expired';
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return 'in less than a second';
  if (seconds < 120) return seconds === 1 ? 'in 1 second' : `in ${seconds} seconds`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 120 ? `in ${minutes} minutes` : `in ${Math.floor(minutes / 60)} hours`;
}

/** The name after `method:` in an operation (`tools/call:delete_volume` → `delete_volume`). */
const toolOf = (operation: string) => operation.slice(operation.indexOf(':') + 1) || operation;

function outcome(approval: PendingApproval, decision: FinalDecision, now: number) {
  const when = utc(decision.decidedAt);
  if (decision.status === 'withdrawn')
    return {
      tone: 'denied',
      title: 'Closed in your MCP client',
      text: `Closed at ${when}: your client declined this request, or the server asked it again there because what it is about changed. Nothing will run from this page, and it can no longer be approved here. Answer the newer question in your client if it shows one, or ask your client to run the tool again.`,
      content: null,
    };
  if (decision.status === 'denied')
    return {
      tone: 'denied',
      title: 'You denied this request',
      text:
        approval.expiresAt <= now
          ? `Denied at ${when}. Nothing ran, and nothing will: this request has expired.`
          : `Denied at ${when}. Nothing will run: your client's retry is answered as declined.`,
      content: null,
    };
  const properties = approval.requestedSchema?.properties ?? {};
  // A choice is shown by the labels the person chose from, not the values behind them.
  const content = Object.entries(decision.content ?? {}).map(([name, value]) => {
    const def = Object.hasOwn(properties, name) ? properties[name] : undefined;
    const options = def ? optionsOf(def) : undefined;
    const label = (v: unknown) => options?.find((o) => o.value === v)?.label ?? String(v);
    return {
      label: def?.title ?? name,
      shown: Array.isArray(value) ? value.map(label).join(', ') : label(value),
    };
  });
  const how = decision.via === 'passkey' ? ' with your passkey' : '';
  // Past its expiry no retry can act on it: the page must not still promise that one will.
  const next =
    approval.expiresAt <= now
      ? `This approval expired at ${utc(approval.expiresAt)}: if your MCP client retried the request before then, it ran once; if not, nothing ran, and running it takes a new request from your client.`
      : 'Go back to your MCP client and let it retry the request: it runs once.';
  return {
    tone: 'approved',
    title: 'You approved this request',
    text: `Approved${how} at ${when}. ${next}`,
    content: content.length > 0 ? content : null,
  };
}

/** What a page with a rejected form shows again: the posted values and a reason per field. */
interface Rejected {
  values: Record<string, unknown>;
  errors: Record<string, string>;
  /** The form came from a page of another version of the server (no `form` marker of this one). */
  stale?: boolean;
}

/** The passkey part of an undecided approval's page: whether one can be used, and where. */
function passkeyView(kit: ViewKit, approval: PendingApproval, path: string, passkeys: number) {
  const register = `${kit.basePath}/passkeys?return=${encodeURIComponent(path)}`;
  return {
    required: approval.level === 'presence',
    problem: passkeyProblem(kit.rp.id),
    ready: passkeys > 0,
    count: passkeys,
    optionsUrl: `${path}/passkey-options`,
    action: `${path}/passkey`,
    register,
  };
}

/** The approval page: the question, the facts, and the buttons that may decide it. */
export function approvalPage(
  kit: ViewKit,
  approval: PendingApproval,
  decision: FinalDecision | undefined,
  who: SignedIn,
  path: string,
  passkeys: number,
  rejected?: Rejected,
) {
  const tool = toolOf(approval.operation);
  const passkey = decision ? null : passkeyView(kit, approval, path, passkeys);
  const buttonOnly = approval.level === 'url';
  const heading = !decision
    ? `Approve ${tool}?`
    : decision.status === 'withdrawn'
      ? `${tool} was closed in your client`
      : `You ${decision.status} ${tool}`;
  const scripts = passkey?.ready
    ? [`${kit.basePath}/assets/webauthn.js`, `${kit.basePath}/assets/passkey.js`]
    : [];
  // The Approve button takes clicks only once the page has been in front a moment (approve.js).
  if (!decision && buttonOnly) scripts.push(`${kit.basePath}/assets/approve.js`);
  const data = {
    ...kit.layout(heading, decision ? 'plain' : 'danger', who.principal, scripts),
    // The header's Passkeys link comes back here, as the in-page one does.
    passkeysUrl: `${kit.basePath}/passkeys?return=${encodeURIComponent(path)}`,
    operation: approval.operation,
    tool,
    heading,
    message: approval.message,
    principal: approval.principal,
    expiresIso: new Date(approval.expiresAt).toISOString(),
    expiresText: utc(approval.expiresAt),
    expiresIn: timeLeft(approval.expiresAt - kit.now()),
    levelText:
      approval.level === 'presence'
        ? 'Passkey: presence and user verification of the principal'
        : passkey?.ready
          ? 'Signed in on this page (URL mode), or your passkey'
          : 'Signed in on this page (URL mode)',
    presence: approval.level === 'presence',
    approveButton: buttonOnly,
    passkey,
    decided: decision ? outcome(approval, decision, kit.now()) : null,
    fields:
      buttonOnly || passkey?.ready
        ? fieldViews(approval.requestedSchema, rejected?.values, rejected?.errors)
        : [],
    formError: rejected?.stale
      ? 'This page was made by another version of the server. Check the answers below, then approve again. Nothing was recorded.'
      : rejected
        ? 'Some answers do not fit the question. Nothing was recorded.'
        : null,
    formLayout: FORM_LAYOUT,
    action: path,
    csrf: csrfToken(who.csrfSecret, approval.id),
  };
  return html(rejected ? 400 : 200, render('approval', data));
}

/** `GET <basePath>/<id>`. */
export async function showApproval(kit: ViewKit, request: Request, id: string, path: string) {
  const who = await signedInAs(kit, request);
  if (!who) return seeOther(kit.hook.signInUrl(path));
  const stored = await kit.store.get(id);
  if (!stored) return missing(kit, who);
  if (stored.approval.principal !== who.principal)
    return kit.notice(403, 'Not your approval', NOT_YOURS, who.principal);
  if (!stored.decision && stored.approval.expiresAt <= kit.now()) return expired(kit, who);
  const passkeys = stored.decision ? [] : await kit.store.listCredentials(who.principal);
  return approvalPage(kit, stored.approval, stored.decision, who, path, passkeys.length);
}

/** `POST <basePath>/<id>`: `decision=approve|deny` and `csrf`. */
export async function decide(kit: ViewKit, request: Request, id: string, path: string) {
  if (!fromOrigin(request, kit.origin))
    return kit.notice(
      403,
      'Refused',
      `This decision did not come from this page. ${originHint(request, kit.origin)} ${NOTHING}`,
    );
  const who = await signedInAs(kit, request);
  if (!who) {
    const link = { href: kit.hook.signInUrl(path), text: 'Sign in' };
    return kit.notice(401, 'Sign in first', `You are not signed in. ${NOTHING}`, null, link);
  }
  const form = await readForm(request);
  if (!form)
    return kit.notice(400, 'Refused', `The form could not be read. ${NOTHING}`, who.principal);
  if (!csrfValid(who.csrfSecret, id, field(form, 'csrf'))) {
    const link = { href: path, text: 'Reload the request' };
    const text = `This form is stale or did not come from your session. ${NOTHING}`;
    return kit.notice(403, 'Refused', text, who.principal, link);
  }
  const choice = field(form, 'decision');
  if (choice !== 'approve' && choice !== 'deny')
    return kit.notice(400, 'Refused', `Choose Approve or Deny. ${NOTHING}`, who.principal);
  let content: Record<string, unknown> | undefined;
  if (choice === 'approve') {
    const stored = await kit.store.get(id);
    const open =
      stored?.approval.principal === who.principal &&
      !stored.decision &&
      stored.approval.expiresAt > kit.now();
    const schema = stored?.approval.requestedSchema;
    if (open && schema && stored.approval.level !== 'presence') {
      const posted = readContent(schema, form);
      content = posted.content;
      const valid = validateFormContent(schema, content);
      if (!valid.ok || !posted.current || Object.keys(posted.unreadable).length > 0) {
        const errors = {
          ...(valid.ok ? {} : Object.fromEntries(valid.issues.map((i) => [i.field, i.reason]))),
          ...posted.unreadable,
        };
        const rejected = { values: content, errors, stale: !posted.current };
        const passkeys = await kit.store.listCredentials(who.principal);
        return approvalPage(kit, stored.approval, undefined, who, path, passkeys.length, rejected);
      }
      if (!isContent(content))
        return kit.notice(400, 'Refused', `${TOO_LONG} ${NOTHING}`, who.principal);
    }
  }
  const result = await kit.store.decide({
    id,
    principal: who.principal,
    outcome: choice === 'approve' ? 'approved' : 'denied',
    via: 'url',
    ...(content && Object.keys(content).length > 0 ? { content: content as never } : {}),
  });
  if (result.status === 'recorded') return seeOther(path);
  return refused(kit, result.reason, who, path, result.decision);
}
