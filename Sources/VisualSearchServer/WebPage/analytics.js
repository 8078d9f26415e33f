// analytics.js — the analytics page's entry point: GET /v3/stats → totals, the timeline plot, per-query and
// per-product tables. The period is in the page URL (?since=7d).

import * as api from './api.js';
import { el, imageUrl, setText } from './dom.js';
import { setupKeys } from './keys.js';
import { lineChart } from './plot.js';

const HOUR = 3600;
const PERIODS = { // since → seconds covered (null: everything) and the bucket that gives 12–30 points
  '1h': { seconds: HOUR, bucket: 300 },
  '24h': { seconds: 24 * HOUR, bucket: HOUR },
  '7d': { seconds: 7 * 24 * HOUR, bucket: 6 * HOUR },
  '30d': { seconds: 30 * 24 * HOUR, bucket: 24 * HOUR },
  all: { seconds: null, bucket: 24 * HOUR },
};
const KNOWN_ACTIONS = ['result_load', 'product_view', 'product_click', 'add_to_cart', 'transaction', 'search', 'click', 'view'];
const COLOURS = 8;

const byId = (id) => document.getElementById(id);
const main = byId('analytics');
const since = byId('since');
let controller = null;
let lastTimeline = null;

const count = (n) => (Number.isFinite(Number(n)) ? Number(n).toLocaleString() : '—');
const percent = (v) => (v === null || v === undefined || !Number.isFinite(Number(v)) ? '—' : `${(Number(v) * 100).toFixed(1)}%`);
const label = (action) => action.replaceAll('_', ' ');

function colourClass(action, actions) {
  const known = KNOWN_ACTIONS.indexOf(action);
  const index = known >= 0 ? known : KNOWN_ACTIONS.length + actions.filter((a) => !KNOWN_ACTIONS.includes(a)).indexOf(action);
  return `c${index % COLOURS}`;
}

function renderTotals(stats) {
  byId('total-events').textContent = count(stats.total ?? 0);
  const list = byId('action-totals');
  const actions = Object.entries(stats.actions || {}).sort((a, b) => b[1] - a[1]);
  list.replaceChildren(list.firstElementChild, ...actions.map(([action, n]) =>
    el('li', { class: 'total', dataset: { action } },
      el('span', { class: 'total-value', text: count(n) }), el('span', { class: 'total-label', text: label(action) }))));
}

function metricCells(row) {
  return [
    el('td', { text: count(row.views ?? 0) }),
    el('td', { text: count(row.clicks ?? 0) }),
    el('td', { text: count(row.add_to_carts ?? 0) }),
    el('td', { text: count(row.transactions ?? 0) }),
    el('td', { text: percent(row.ctr) }),
    el('td', { text: percent(row.conversion) }),
  ];
}

function renderTable(table, rows, firstCell, emptyText) {
  const body = table.tBodies[0];
  if (!rows.length) {
    body.replaceChildren(el('tr', { class: 'empty' }, el('td', { colspan: 7, text: emptyText })));
    return;
  }
  body.replaceChildren(...rows.map((row) => el('tr', { dataset: { key: String(row.key) } }, safeCell(firstCell, row), ...metricCells(row))));
}

/** A row's first cell, or its key as plain text when the stored event holds something the cell cannot show:
 * the page renders whatever the collector stored. */
function safeCell(firstCell, row) {
  try {
    return firstCell(row);
  } catch {
    return el('td', {}, el('span', { class: 'mono', text: String(row?.key ?? '') }));
  }
}

/** The URL when it parses and points at this server (the CSP allows no other pictures), else null. */
function sameOriginUrl(text) {
  if (typeof text !== 'string' || !text) return null;
  try {
    const url = new URL(text, location.href);
    return url.origin === location.origin ? url.href : null;
  } catch {
    return null;
  }
}

/** A query: its picture (when its result_load carried one, from this server only: the CSP allows no other),
 * what was searched (the label) and the reqid. */
function queryCell(row) {
  const parts = [];
  const image = sameOriginUrl(row.img_url);
  if (image) {
    const picture = el('img', { src: image, alt: '', width: 44, height: 44, loading: 'lazy', decoding: 'async' });
    picture.addEventListener('error', () => { picture.hidden = true; }, { once: true });
    parts.push(picture);
  }
  const text = el('span', { class: 'query-text' });
  if (row.label) text.append(el('span', { class: 'query-label', text: String(row.label) }));
  text.append(el('span', { class: 'mono', text: String(row.key) }));
  parts.push(text);
  return el('td', {}, el('span', { class: 'product-cell' }, ...parts));
}

function productCell(row) {
  const name = String(row.key);
  const similar = `/?${new URLSearchParams({ q: 'similar', im_name: name })}`;
  const picture = el('img', { src: imageUrl(name, 400), alt: '', width: 44, height: 44, loading: 'lazy', decoding: 'async' });
  picture.addEventListener('error', () => { picture.hidden = true; }, { once: true });
  return el('td', {}, el('span', { class: 'product-cell' }, picture, el('a', { href: similar, title: `Search similar to ${name}`, text: name })));
}

/** Timeline buckets, zeros filled in, one series per action. */
function renderTimeline(timeline, period, bucketMs, from) {
  lastTimeline = { timeline, period, bucketMs, from };
  const now = Date.now();
  const starts = timeline.map((b) => Number(b.start)).filter(Number.isFinite);
  const anchor = starts.length ? starts[0] : Math.floor(now / bucketMs) * bucketMs;
  const align = (t) => anchor + Math.floor((t - anchor) / bucketMs) * bucketMs;
  const since = from ?? (period.seconds ? now - period.seconds * 1000 : null); // the server says where the period starts
  const first = since !== null ? align(since) : (starts.length ? Math.min(...starts) : align(now) - 6 * bucketMs);
  const last = Math.max(align(now), ...starts);
  const byStart = new Map(timeline.map((b) => [Number(b.start), b.counts || {}]));
  const actions = [...new Set(timeline.flatMap((b) => Object.keys(b.counts || {})))]
    .sort((a, b) => (KNOWN_ACTIONS.indexOf(a) + 1 || 99) - (KNOWN_ACTIONS.indexOf(b) + 1 || 99) || a.localeCompare(b));
  const grid = [];
  for (let t = first; t <= last && grid.length < 2000; t += bucketMs) grid.push(t);
  const series = actions.map((action) => ({
    name: action,
    className: colourClass(action, actions),
    points: grid.map((t) => ({ t, v: Number((byStart.get(t) || {})[action] || 0) })),
  }));
  lineChart(byId('timeline'), { series, x0: first, x1: last, emptyText: 'No events in this period' });
  byId('timeline-legend').replaceChildren(...series.map((s) =>
    el('li', { class: s.className }, el('span', { class: 'legend-key', 'aria-hidden': 'true' }), label(s.name))));
}

async function load() {
  controller?.abort();
  controller = new AbortController();
  const key = PERIODS[since.value] ? since.value : '24h';
  const period = PERIODS[key];
  main.dataset.state = 'loading';
  byId('status').textContent = 'Loading…';
  setText(byId('error'), '');
  try {
    const stats = await api.stats({ since: period.seconds ? key : undefined, limit: 20, bucket: period.bucket }, controller.signal);
    renderTotals(stats);
    const bucketMs = (Number(stats.bucket_seconds) || period.bucket) * 1000;
    const from = Number.isFinite(stats.since) ? stats.since : null;
    renderTimeline(Array.isArray(stats.timeline) ? stats.timeline : [], period, bucketMs, from);
    renderTable(byId('queries-table'), Array.isArray(stats.queries) ? stats.queries : [], queryCell, 'No queries with views or clicks.');
    renderTable(byId('products-table'), Array.isArray(stats.products) ? stats.products : [], productCell, 'No products with views or clicks.');
    main.dataset.state = 'ready';
    byId('status').textContent = `Updated ${new Date().toLocaleTimeString()}.`;
  } catch (error) {
    if (error.name === 'AbortError') return;
    main.dataset.state = 'error';
    byId('status').textContent = '';
    setText(byId('error'), error.message);
  }
}

since.addEventListener('change', () => {
  const url = new URL(location.href);
  url.searchParams.set('since', since.value);
  history.replaceState(null, '', url);
  load();
});
byId('refresh').addEventListener('click', load);

let resizeTimer = 0;
let plottedWidth = 0;
new ResizeObserver(() => {
  const width = byId('timeline').clientWidth;
  if (width === plottedWidth) return;
  plottedWidth = width;
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (lastTimeline) renderTimeline(lastTimeline.timeline, lastTimeline.period, lastTimeline.bucketMs, lastTimeline.from);
  }, 100);
}).observe(byId('timeline'));

const keys = setupKeys(load);
const fromUrl = new URLSearchParams(location.search).get('since');
if (fromUrl && PERIODS[fromUrl]) since.value = fromUrl;

(async () => {
  if (await keys.needsKey()) {
    keys.ask();
    return;
  }
  load();
})();
