/**
 * The browser side of passkeys: the page's only script, served as a file
 * from `<basePath>/assets/passkey.js` (the CSP allows scripts from the page's
 * origin only, no inline script), and `@simplewebauthn/browser`'s own bundle
 * from `<basePath>/assets/webauthn.js`, read from the installed package.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * What `passkey.js` does, in plain JavaScript (no build step, no inline
 * handler): on the approval page, "Approve with passkey" posts the decision
 * form's fields (CSRF token and answers) to `data-options`, runs
 * `startAuthentication` with the options the server answers, and submits the
 * assertion in the `#passkey-form` form; on the registration page, "Register
 * a passkey" does the same with `startRegistration`, the page password of
 * `#passkey-password` (outside every form, so that neither Enter nor a page
 * without script ever posts it) added to the options request only; Enter in
 * that field presses the button. A failure is shown in the
 * `#passkey-status` element and nothing is submitted.
 */
export const PASSKEY_SCRIPT = `'use strict';
(function () {
  var webauthn = window.SimpleWebAuthnBrowser;
  var status = document.getElementById('passkey-status');
  function say(text, isError) {
    if (!status) return;
    status.textContent = text;
    status.hidden = false;
    status.className = isError ? 'passkey-status error' : 'passkey-status';
  }
  function failure(error) {
    if (error && error.name === 'NotAllowedError')
      return 'The passkey prompt was cancelled or timed out, or your passkey could not verify you. If this device has no passkey of yours, use the device you registered one on. Nothing was recorded.';
    return (error && error.message) || 'The passkey step failed. Nothing was recorded.';
  }
  var password = document.getElementById('passkey-password');
  function options(url, form) {
    var body = new URLSearchParams(new FormData(form));
    if (password && form.id === 'passkey-form') body.set('password', password.value);
    return fetch(url, {
      method: 'POST',
      body: body,
      credentials: 'same-origin',
      cache: 'no-store',
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok || !body.options)
          throw new Error(body.error || 'The server answered ' + response.status + '. Nothing was recorded.');
        return body.options;
      });
    });
  }
  function wire(button, source, ceremony, field) {
    var result = document.getElementById('passkey-form');
    if (!button || !source || !result || !webauthn) return;
    button.disabled = false;
    button.addEventListener('click', function () {
      if (!source.reportValidity()) return;
      if (password && source === result && !password.reportValidity()) return;
      button.disabled = true;
      say('Waiting for your passkey…', false);
      options(button.getAttribute('data-options'), source)
        .then(function (optionsJSON) { return ceremony({ optionsJSON: optionsJSON }); })
        .then(function (credential) {
          result.elements.namedItem(field).value = JSON.stringify(credential);
          if (password) password.value = '';
          say('Checking your passkey…', false);
          result.submit();
        })
        .catch(function (error) {
          say(failure(error), true);
          button.disabled = false;
        });
    });
  }
  wire(document.getElementById('passkey-approve'), document.querySelector('form.decide'),
    webauthn && webauthn.startAuthentication, 'assertion');
  var register = document.getElementById('passkey-register');
  wire(register, document.getElementById('passkey-form'),
    webauthn && webauthn.startRegistration, 'registration');
  if (password && register)
    password.addEventListener('keydown', function (event) {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      if (!register.disabled) register.click();
    });
})();
`;

let bundle: Promise<string> | undefined;

/**
 * The browser bundle of `@simplewebauthn/browser` (`dist/bundle/index.umd.min.js`,
 * which defines `window.SimpleWebAuthnBrowser`), read once from the installed
 * package next to its entry point.
 * @throws the file system's error when the package is not installed (the page answers 500).
 */
export function webauthnBundle(): Promise<string> {
  bundle ??= (async () => {
    const require = createRequire(import.meta.url);
    const entry = require.resolve('@simplewebauthn/browser');
    const root = dirname(dirname(entry));
    return readFile(join(root, 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
  })();
  bundle.catch(() => {
    bundle = undefined;
  });
  return bundle;
}
