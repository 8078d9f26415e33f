// tracking.js — analytics events for the collector (POST /v3/events): result_load, product_view, product_click.
// Queued in memory, sent every 2 s and with sendBeacon when the page is hidden or left (docs/web-page.md §Tracking).

import { postEvents } from './api.js';

const FLUSH_MS = 2000;
const MAX_QUEUE = 500;
const queue = [];

/** crypto.randomUUID needs a secure context; a page on http://host:port (not localhost) has none. */
function randomId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function stored(storage, key) {
  try {
    let value = storage.getItem(key);
    if (!value) {
      value = randomId();
      storage.setItem(key, value);
    }
    return value;
  } catch {
    return randomId();
  }
}

let uidValue = null;
let sidValue = null;
const uid = () => (uidValue ||= stored(localStorage, 'vsearch-uid'));
const sid = () => (sidValue ||= stored(sessionStorage, 'vsearch-sid'));

function track(action, fields) {
  if (queue.length >= MAX_QUEUE) queue.shift();
  queue.push({ action, ...fields, eid: randomId(), ts: String(Date.now()), sid: sid() });
}

/** One per answered search; `imUrl` (the query picture) and `label` (what was searched) describe it on /analytics. */
export function resultLoad(queryId, { imUrl = '', label = '' } = {}) {
  if (!queryId) return;
  const fields = { queryId: String(queryId) };
  if (imUrl) fields.imUrl = String(imUrl);
  if (label) fields.label = String(label).slice(0, 32);
  track('result_load', fields);
}

/** product_view / product_click: the collector requires queryId, pid, imUrl and pos ≥ 1. */
function productEvent(action, { queryId, pid, imUrl, pos }) {
  if (!queryId || !pid || !imUrl || !(pos >= 1)) return;
  track(action, { queryId: String(queryId), pid: String(pid), imUrl: String(imUrl), pos: String(pos) });
}

export const productClick = (product) => productEvent('product_click', product);

let sending = false;
export async function flush({ beacon = false } = {}) {
  if (!queue.length || (sending && !beacon)) return;
  const events = queue.splice(0, queue.length);
  const json = JSON.stringify({ uid: uid(), events });
  sending = !beacon;
  const sent = await postEvents(json, { beacon });
  if (!beacon) sending = false;
  if (!sent && !beacon) queue.unshift(...events.slice(-(MAX_QUEUE - queue.length))); // try again later
}

setInterval(() => { flush(); }, FLUSH_MS);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') flush({ beacon: true });
});
window.addEventListener('pagehide', () => flush({ beacon: true }));

const viewed = new Set(); // `${queryId}\n${pid}`: product_view once per result per search

/**
 * A product_view watcher for one list of results: observe(element, product) sends product_view once the
 * element (the picture's box) is at least half visible; reset() forgets the elements of the previous search.
 */
export function createViewTracker() {
  const products = new WeakMap();
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting || entry.intersectionRatio < 0.5) continue;
      observer.unobserve(entry.target);
      const product = products.get(entry.target);
      if (!product) continue;
      const key = `${product.queryId}\n${product.pid}`;
      if (viewed.has(key)) continue;
      viewed.add(key);
      productEvent('product_view', product);
    }
  }, { threshold: [0.5] });
  return {
    observe(element, product) {
      if (!product.queryId) return;
      products.set(element, product);
      observer.observe(element);
    },
    reset() { observer.disconnect(); },
  };
}
