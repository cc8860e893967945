/**
 * The page's HTML, rendered by Handlebars: `{{value}}` is HTML-escaped
 * (`& < > " ' \` =`), the templates never use the unescaped forms
 * (`{{{…}}}`, `{{&…}}`; a test checks), run in strict mode (a missing
 * field throws instead of rendering empty) and may call only the built-in
 * helpers. No inline script and no inline style: the stylesheet and the
 * passkey scripts are files of the page's origin.
 */
import Handlebars from 'handlebars';
import { visibleData } from './visible.js';

const LAYOUT = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{title}} · {{serviceName}}</title>
<link rel="stylesheet" href="{{basePath}}/assets/page.css">
{{#each scripts}}<script src="{{this}}" defer></script>
{{/each}}</head>
<body>
<header class="bar">
  <span class="brand">{{serviceName}}</span>
  {{#if signedIn}}<span class="who">Signed in as <strong>{{signedIn}}</strong></span>
  <a class="nav" href="{{#if passkeysUrl}}{{passkeysUrl}}{{else}}{{basePath}}/passkeys{{/if}}">Passkeys</a>
  {{#if signOutUrl}}<form method="post" action="{{signOutUrl}}" class="inline"><button type="submit" class="link">Sign out</button></form>{{/if}}{{/if}}
</header>
<main class="card {{tone}}">
{{> @partial-block}}
{{#if codesShown}}<p class="hint codes-note" role="note">Characters that would reorder, hide or change the text around them are shown as their code, such as <code>\\u{202e}</code>.</p>{{/if}}
</main>
<footer>Served by {{origin}}. Before you approve, check that your address bar shows this address.</footer>
</body>
</html>
`;

const APPROVAL = `{{#> layout}}
<p class="eyebrow">Approval requested for <code>{{operation}}</code></p>
<h1>{{heading}}</h1>
<section class="question" aria-labelledby="q">
  <h2 id="q">The request, exactly as your client was shown it</h2>
  <p class="message">{{message}}</p>
</section>
{{#unless decided}}
<section class="consequence" aria-labelledby="c">
  <h2 id="c">What happens if you approve</h2>
  <p><code>{{tool}}</code> runs once, as <strong>{{principal}}</strong>, when your client retries the request.
  <strong class="final">This cannot be undone.</strong></p>
  <p class="deny-note">If you deny, nothing runs, and this request cannot be approved afterwards.</p>
</section>
{{/unless}}
<dl class="facts">
  <dt>For principal</dt><dd>{{principal}}</dd>
  {{#unless decided}}<dt>Expires</dt><dd><time datetime="{{expiresIso}}">{{expiresText}}</time> ({{expiresIn}})</dd>{{/unless}}
  <dt>Confirmation needed</dt><dd>{{levelText}}</dd>
</dl>
{{#if decided}}
<div class="outcome {{decided.tone}}" role="status">
  <h2>{{decided.title}}</h2>
  <p>{{decided.text}}</p>
  {{#if decided.content}}<dl class="facts">{{#each decided.content}}<dt>{{label}}</dt><dd>{{shown}}</dd>{{/each}}</dl>{{/if}}
</div>
{{else}}
{{#if passkey.required}}
<div class="passkey" role="note">
  <h2>A passkey is required to approve this</h2>
  {{#if passkey.problem}}<p class="error" role="alert">{{passkey.problem}}</p>{{/if}}
  {{#if passkey.ready}}<p>Approve with a passkey registered to {{principal}}: your device checks that it is you (fingerprint, face or PIN) and signs this exact request, once.</p>
  {{else}}<p>This action can only be approved with a passkey registered to {{principal}}, and you have none yet. <a href="{{passkey.register}}">Register a passkey</a>, then come back to this page. You can still deny it.</p>{{/if}}
</div>
{{/if}}
<form method="post" action="{{action}}" class="decide">
  <input type="hidden" name="csrf" value="{{csrf}}">
  <input type="hidden" name="form" value="{{formLayout}}">
  {{#if formError}}<p class="error" role="alert">{{formError}}</p>{{/if}}
  {{#each fields}}
  <fieldset class="field">
    {{#if isChoice}}<legend>{{label}}</legend>
    {{#each options}}<label class="option"><input type="radio" name="{{../name}}" value="{{value}}"{{#if checked}} checked{{/if}}{{#if ../required}} required{{/if}}> {{label}}</label>
    {{/each}}{{/if}}
    {{#if isMulti}}<legend>{{label}}</legend>
    {{#each options}}<label class="option"><input type="checkbox" name="{{../name}}" value="{{value}}"{{#if checked}} checked{{/if}}> {{label}}</label>
    {{/each}}{{/if}}
    {{#if isBoolean}}<label class="option"><input type="checkbox" name="{{name}}" value="true"{{#if checked}} checked{{/if}}> {{label}}</label>{{/if}}
    {{#if isText}}<label for="{{id}}">{{label}}</label>
    <input id="{{id}}" name="{{name}}" type="{{inputType}}" value="{{value}}"{{#if required}} required{{/if}}{{#if minLength}} minlength="{{minLength}}"{{/if}}{{#if maxLength}} maxlength="{{maxLength}}"{{/if}}>{{/if}}
    {{#if isNumber}}<label for="{{id}}">{{label}}</label>
    <input id="{{id}}" name="{{name}}" type="number" step="{{step}}" value="{{value}}"{{#if required}} required{{/if}}{{#if min}} min="{{min}}"{{/if}}{{#if max}} max="{{max}}"{{/if}}>{{/if}}
    {{#if valueCodes}}<p class="hint">This value holds characters that do not show: {{valueCodes}}</p>{{/if}}
    {{#if description}}<p class="hint">{{description}}</p>{{/if}}
    {{#if error}}<p class="error">{{error}}</p>{{/if}}
  </fieldset>
  {{/each}}
  <p id="passkey-status" class="passkey-status" role="status" aria-live="polite" hidden></p>
  <div class="buttons">
    <button type="submit" name="decision" value="deny" class="button secondary" formnovalidate>Deny</button>
    {{#if approveButton}}<button type="submit" name="decision" value="approve" class="button danger" id="approve" aria-disabled="true" hidden>Approve</button><noscript><button type="submit" name="decision" value="approve" class="button danger">Approve</button></noscript>{{/if}}
    {{#if passkey.ready}}<button type="button" id="passkey-approve" class="button {{#if passkey.required}}danger{{else}}secondary{{/if}}" data-options="{{passkey.optionsUrl}}" disabled>Approve with passkey</button>{{/if}}
  </div>
  {{#if approveButton}}<p id="approve-hint" class="hint">Approve shows a moment after this page opens, with a small script of this server's. If it does not, reload the page.</p>{{/if}}
  {{#if passkey.ready}}<noscript><p class="hint">Approving with a passkey needs JavaScript on this page.</p></noscript>{{/if}}
</form>
{{#if passkey.ready}}
<form id="passkey-form" method="post" action="{{passkey.action}}" hidden>
  <input type="hidden" name="csrf" value="{{csrf}}">
  <input type="hidden" name="assertion" value="">
</form>
{{/if}}
{{/if}}
{{/layout}}`;

const SIGN_IN = `{{#> layout}}
<p class="eyebrow">Approval page</p>
<h1>Sign in to review the request</h1>
<p>Sign in as the principal the MCP client acts for. Only that principal can approve or deny its requests.</p>
{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
<form method="post" action="{{action}}" class="sign-in">
  <input type="hidden" name="return" value="{{returnTo}}">
  <label for="principal">Principal</label>
  <input id="principal" name="principal" autocomplete="username" required value="{{principalValue}}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required aria-describedby="password-hint">
  <p id="password-hint" class="hint">The password of this approval page: one the MCP client should not hold.</p>
  <button type="submit" class="button primary">Sign in</button>
</form>
{{#if returnTo}}<p class="hint">Already signed in? <a href="{{returnTo}}">Continue to the request</a>.</p>{{/if}}
{{/layout}}`;

const PASSKEYS = `{{#> layout}}
<p class="eyebrow">Approval page</p>
<h1>Your passkeys</h1>
<p>Some requests can only be approved with a passkey: your device checks that it is you (fingerprint, face or PIN) and signs the one request you approve. A passkey registered here works only on this server, and only for <strong>{{principal}}</strong>.</p>
{{#if registered}}<p class="ok" role="status">{{registered}}</p>{{/if}}
{{#if passkeyProblem}}<p class="error" role="alert">{{passkeyProblem}}</p>{{/if}}
{{#if passkeys.length}}
<table class="passkeys">
  <thead><tr><th scope="col">Registered</th><th scope="col">Passkey</th><th scope="col">Transports</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
  <tbody>
  {{#each passkeys}}<tr>
    <td><time datetime="{{createdIso}}">{{created}}</time></td>
    <td><code title="{{id}}">{{shortId}}</code></td>
    <td>{{transports}}</td>
    <td>{{#if ../mayRemove}}<form method="post" action="{{../removeAction}}" class="inline"><input type="hidden" name="csrf" value="{{../csrf}}"><input type="hidden" name="id" value="{{id}}"><input type="hidden" name="return" value="{{../returnTo}}"><button type="submit" class="link">Remove</button></form>{{/if}}</td>
  </tr>
  {{/each}}</tbody>
</table>
{{else}}
<p class="empty">You have no passkey registered yet.</p>
{{/if}}
{{#if mayRegister}}
<p id="passkey-status" class="passkey-status" role="status" aria-live="polite" hidden></p>
<div class="register">
  {{#if askPassword}}
  <label for="passkey-password">Your page password</label>
  <input id="passkey-password" type="password" autocomplete="current-password" required aria-describedby="password-hint">
  <p id="password-hint" class="hint">Asked again here: a passkey lets you approve what only a person may, so your session alone cannot add one.</p>
  {{/if}}
  <form id="passkey-form" method="post" action="{{action}}">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="return" value="{{returnTo}}">
    <input type="hidden" name="registration" value="">
    <button type="button" id="passkey-register" class="button primary" data-options="{{optionsUrl}}" disabled>Register a passkey</button>
  </form>
</div>
<noscript><p class="hint">Registering a passkey needs JavaScript on this page.</p></noscript>
{{else}}
<p class="hint">{{closed}}</p>
{{/if}}
{{#if returnTo}}<p><a href="{{returnTo}}">Back to the request</a></p>{{/if}}
{{/layout}}`;

const NOTICE = `{{#> layout}}
<p class="eyebrow">{{eyebrow}}</p>
<h1>{{heading}}</h1>
<p>{{text}}</p>
{{#if link}}<p><a href="{{link.href}}">{{link.text}}</a></p>{{/if}}
{{/layout}}`;

/** The templates, by view name: checked by tests for unescaped output. */
export const TEMPLATES = {
  layout: LAYOUT,
  approval: APPROVAL,
  'sign-in': SIGN_IN,
  passkeys: PASSKEYS,
  notice: NOTICE,
};

const handlebars = Handlebars.create();
const compile = (source: string) =>
  handlebars.compile(source, { strict: true, knownHelpersOnly: true, noEscape: false });
handlebars.registerPartial('layout', compile(LAYOUT));
const compiled = {
  approval: compile(APPROVAL),
  'sign-in': compile(SIGN_IN),
  passkeys: compile(PASSKEYS),
  notice: compile(NOTICE),
};

/** What every view's layout needs. */
export interface LayoutData {
  title: string;
  serviceName: string;
  origin: string;
  basePath: string;
  /** The principal signed in, or `null`. */
  signedIn: string | null;
  /** Where the sign-out button posts, or `null` for none. */
  signOutUrl: string | null;
  /** `danger`, `warning` or `plain`: the card's accent. */
  tone: 'danger' | 'warning' | 'plain';
  /** Paths of the scripts the page loads (same origin, deferred); empty on pages without passkeys. */
  scripts: string[];
  /** Where the header's Passkeys link goes, when not `<basePath>/passkeys` (e.g. with `?return=` to this approval). */
  passkeysUrl?: string;
}

/**
 * Render `view` with `data`; every string in `data` is escaped, and every
 * string shown as text has its reordering, invisible and control characters
 * shown as codes (`visibleData`), with a line under the card that says so.
 * @throws on a missing field (a bug).
 */
export function render(view: keyof typeof compiled, data: LayoutData & Record<string, unknown>) {
  const shown = visibleData(data);
  return compiled[view]({ ...shown.data, codesShown: shown.changed });
}
