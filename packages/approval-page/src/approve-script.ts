/**
 * The approval page's guard against a click meant for another page: served
 * as a file from `<basePath>/assets/approve.js` (the CSP allows scripts from
 * the page's origin only, no inline script).
 */

/**
 * How long the approval page must have been the visible, focused page, with
 * no click or key press on it, before its Approve button takes a click,
 * milliseconds: longer than the slowest double click an operating system
 * accepts (Windows: 500 ms by default, 900 ms at most).
 */
export const APPROVE_AFTER_MS = 1000;

/**
 * What `approve.js` does, in plain JavaScript: the Approve button is sent
 * hidden (a `<noscript>` button stands in for it where scripts do not run);
 * the script shows it, and lets it take a click only once the page has been
 * visible and focused for {@link APPROVE_AFTER_MS} without a break and
 * without a press of a mouse button or a key. Until then the button is
 * `aria-disabled` and drawn faded, and a click on it (or Enter, or Space)
 * does nothing but start the wait again. Leaving the page (another tab,
 * window or popup in front) starts it again too. So the clicks of a double
 * click, or of a "click here ten times" game, that a page of another origin
 * started before navigating this tab to the approval under the pointer (or
 * closing a popup that covered it) never approve: each restarts the wait.
 * A script that is not run leaves no Approve button but the `<noscript>`
 * one, and the page's hint says to reload.
 */
export const APPROVE_SCRIPT = `'use strict';
(function () {
  var button = document.getElementById('approve');
  if (!button) return;
  var hint = document.getElementById('approve-hint');
  var since = 0;
  function front() { return document.visibilityState === 'visible' && document.hasFocus(); }
  function ready() { return since !== 0 && Date.now() - since >= ${APPROVE_AFTER_MS}; }
  function check() {
    if (!front()) since = 0;
    else if (since === 0) since = Date.now();
    button.setAttribute('aria-disabled', ready() ? 'false' : 'true');
  }
  function pressed() {
    if (!ready()) since = front() ? Date.now() : 0;
    check();
  }
  button.addEventListener('click', function (event) {
    if (!ready()) event.preventDefault();
  });
  window.addEventListener('pointerdown', pressed, true);
  window.addEventListener('keydown', pressed, true);
  window.addEventListener('blur', check);
  window.addEventListener('focus', check);
  document.addEventListener('visibilitychange', check);
  button.hidden = false;
  if (hint) hint.hidden = true;
  check();
  setInterval(check, 100);
})();
`;
