/**
 * The approval page's guard against a click meant for another page: served
 * as a file from `<basePath>/assets/approve.js` (the CSP allows scripts from
 * the page's origin only, no inline script).
 */

/**
 * How long the approval page must have been the visible, focused page
 * before its Approve button takes a click, milliseconds: longer than the
 * slowest double click an operating system accepts (Windows: 500 ms by
 * default, 900 ms at most).
 */
export const APPROVE_AFTER_MS = 1000;

/**
 * What `approve.js` does, in plain JavaScript: the Approve button is sent
 * hidden and disabled (a `<noscript>` button stands in for it where scripts
 * do not run); the script shows it, and enables it only once the page has
 * been visible and focused for {@link APPROVE_AFTER_MS} without a break.
 * Leaving the page (another tab, window or popup in front) disables it
 * again. So the second click of a double click that a page of another
 * origin started, by navigating this tab to the approval under the pointer
 * or by closing a popup that covered it ("double-clickjacking"), lands on a
 * disabled button. A script that is not run leaves no Approve button but
 * the `<noscript>` one.
 */
export const APPROVE_SCRIPT = `'use strict';
(function () {
  var button = document.getElementById('approve');
  if (!button) return;
  var since = 0;
  function check() {
    if (document.visibilityState !== 'visible' || !document.hasFocus()) since = 0;
    else if (since === 0) since = Date.now();
    button.disabled = since === 0 || Date.now() - since < ${APPROVE_AFTER_MS};
  }
  button.hidden = false;
  check();
  window.addEventListener('blur', check);
  window.addEventListener('focus', check);
  document.addEventListener('visibilitychange', check);
  setInterval(check, 100);
})();
`;
