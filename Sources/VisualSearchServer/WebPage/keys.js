// keys.js — the key dialog (#key-dialog): asked for when GET /health says "keys" and after any 401.

import * as api from './api.js';

/**
 * Wires the dialog; onKey() runs after a key is entered (to retry). Returns {needsKey(), ask(reason)}.
 * A key with ':' is an access key and secret (sent as HTTP Basic), otherwise an app key (access_key).
 */
export function setupKeys(onKey) {
  const dialog = document.getElementById('key-dialog');
  const form = document.getElementById('key-form');
  const input = document.getElementById('key-input');
  const reason = document.getElementById('key-reason');
  const defaultReason = reason.textContent;

  function ask(message) {
    reason.textContent = message || defaultReason;
    if (dialog.open) return;
    input.value = '';
    dialog.showModal();
    input.focus();
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    api.setKey(key);
    dialog.close();
    onKey();
  });

  api.onUnauthorized(() => ask(api.getKey() ? 'The server refused this key. Enter another one.' : defaultReason));

  return {
    ask,
    /** Asks the server whether it needs a key; true when it does and none is kept yet. */
    async needsKey() {
      try {
        const health = await api.health();
        return health.auth === 'keys' && !api.getKey();
      } catch {
        return false; // the searches will say what is wrong
      }
    },
  };
}
