/**
 * The page's stylesheet, served from `<basePath>/assets/page.css` (the CSP
 * allows styles from the page's own origin only; no inline style).
 */
export const PAGE_CSS = `:root {
  --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #f3f5f7; --card: #fff;
  --danger: #b42318; --danger-bg: #fef3f2; --warn: #9a6700; --warn-bg: #fff8c5;
  --ok: #1a7f37; --ok-bg: #eafbee; --focus: #0969da;
}
* { box-sizing: border-box; }
body {
  margin: 0; color: var(--ink); background: var(--bg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", Arial, sans-serif;
}
.bar {
  display: flex; align-items: center; gap: 1rem; padding: .75rem 1.5rem;
  background: var(--card); border-bottom: 1px solid var(--line);
}
.brand { font-weight: 700; margin-right: auto; }
.who { color: var(--muted); font-size: .9rem; }
.nav { font-size: .9rem; }
.card {
  max-width: 44rem; margin: 2rem auto 1rem; padding: 2rem 2.25rem; background: var(--card);
  border: 1px solid var(--line); border-top: 6px solid var(--line); border-radius: 12px;
}
.card.danger { border-top-color: var(--danger); }
.card.warning { border-top-color: var(--warn); }
.eyebrow { margin: 0 0 .25rem; color: var(--muted); font-size: .8rem; letter-spacing: .04em; }
h1 { margin: 0 0 1.25rem; font-size: 1.65rem; line-height: 1.25; }
h2 { margin: 0 0 .5rem; color: var(--muted); font-size: .78rem; letter-spacing: .06em; text-transform: uppercase; }
code {
  padding: .1em .35em; border-radius: 4px; background: #eef1f4; font-size: .92em;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
.question {
  margin-bottom: 1rem; padding: 1rem 1.25rem; border: 1px solid var(--line); border-radius: 8px;
  background: #fafbfc;
}
/* Stored text a question quotes may stack combining marks; each block clips what would draw over its neighbours. */
.message, .option, .facts dd, .field legend, .field > label:not(.option) { overflow: clip; overflow-clip-margin: .2em; }
.message { margin: 0; font-size: 1.05rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.consequence {
  margin-bottom: 1rem; padding: 1rem 1.25rem; border: 2px solid var(--danger); border-radius: 8px;
  background: var(--danger-bg);
}
.consequence h2 { color: var(--danger); }
.consequence p { margin: 0 0 .5rem; }
.final { display: block; margin-top: .35rem; color: var(--danger); font-size: 1.1rem; }
.deny-note { color: var(--muted); font-size: .95rem; }
.consequence .deny-note { margin: 0; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.5rem; margin: 1.25rem 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.decide { margin: 1.5rem 0 0; padding-top: 1.25rem; border-top: 1px solid var(--line); }
.buttons { display: flex; justify-content: flex-end; gap: .75rem; }
.field { margin: 0 0 1.25rem; padding: 0; border: 0; }
.field legend, .field > label:not(.option) { margin-bottom: .35rem; padding: 0; font-weight: 600; }
.field > label:not(.option) { display: block; }
.field input[type=text], .field input[type=email], .field input[type=url], .field input[type=date],
.field input[type=number] {
  width: 100%; max-width: 24rem; padding: .5rem .65rem; border: 1px solid #afb8c1; border-radius: 6px; font: inherit;
}
.option {
  display: flex; align-items: baseline; gap: .6rem; margin: .35rem 0; padding: .55rem .75rem;
  border: 1px solid var(--line); border-radius: 6px; cursor: pointer; overflow-wrap: anywhere;
}
.option:has(input:checked) { border-color: var(--danger); background: var(--danger-bg); }
.field .hint, .field .error { margin: .35rem 0 0; }
.button {
  padding: .65rem 1.5rem; border: 1px solid transparent; border-radius: 8px; cursor: pointer;
  font: inherit; font-weight: 600;
}
.button.danger { background: var(--danger); color: #fff; }
.button.danger:hover { background: #912018; }
.button.secondary { background: var(--card); color: var(--ink); border-color: #afb8c1; }
.button.secondary:hover { background: #f3f4f6; }
.button.primary { background: #1f6feb; color: #fff; }
.button:focus-visible, .link:focus-visible, input:focus-visible, a:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px;
}
.button:disabled, .button[aria-disabled=true] { opacity: .45; cursor: not-allowed; }
.passkey, .outcome { margin-top: 1.25rem; padding: 1rem 1.25rem; border: 1px solid; border-radius: 8px; }
.passkey { border-color: var(--warn); background: var(--warn-bg); }
.passkey h2 { color: var(--warn); }
.passkey p, .outcome p { margin: 0; }
.outcome.approved { border-color: var(--ok); background: var(--ok-bg); }
.outcome.approved h2 { color: var(--ok); }
.outcome.denied { border-color: var(--line); background: #f6f8fa; }
.sign-in { display: grid; gap: .35rem; max-width: 24rem; margin-top: 1rem; }
.sign-in input { padding: .55rem .7rem; border: 1px solid #afb8c1; border-radius: 6px; font: inherit; }
.sign-in label { margin-top: .5rem; font-weight: 600; }
.sign-in button { justify-self: start; margin-top: 1rem; }
.error { padding: .6rem .8rem; border-radius: 6px; background: var(--danger-bg); color: var(--danger); }
.hint { color: var(--muted); font-size: .9rem; }
a { color: #0969da; }
.inline { display: inline; margin: 0; }
.link {
  padding: 0; border: 0; background: none; color: #0969da; cursor: pointer;
  font: inherit; font-size: .9rem; text-decoration: underline;
}
.ok {
  padding: .6rem .8rem; border: 1px solid var(--ok); border-radius: 6px; background: var(--ok-bg); color: var(--ok);
}
.empty { color: var(--muted); }
.passkeys { width: 100%; margin: 1.25rem 0 0; border-collapse: collapse; }
.passkeys th {
  padding: .4rem .75rem .4rem 0; border-bottom: 1px solid var(--line); color: var(--muted);
  font-size: .78rem; font-weight: 600; letter-spacing: .06em; text-align: left; text-transform: uppercase;
}
.passkeys td { padding: .6rem .75rem .6rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.passkeys td:last-child, .passkeys th:last-child { padding-right: 0; text-align: right; }
.register { margin: 1.5rem 0 0; display: grid; gap: .35rem; max-width: 24rem; }
.register form { margin: 0; }
.register input:not([type=hidden]) { padding: .55rem .7rem; border: 1px solid #afb8c1; border-radius: 6px; font: inherit; }
.register label { font-weight: 600; }
.register .hint { margin: 0 0 .5rem; }
.register button { justify-self: start; }
.passkey-status { margin: 0 0 1rem; color: var(--muted); }
.passkey-status.error { color: var(--danger); }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;
}
footer { max-width: 44rem; margin: 0 auto 2rem; padding: 0 1rem; color: var(--muted); font-size: .8rem; text-align: center; }
@media (max-width: 40rem) {
  .card { margin: 0 0 1rem; padding: 1.25rem; border-radius: 0; }
  .buttons { flex-direction: column; }
  .facts { grid-template-columns: 1fr; }
}
`;
