// results.js — result cards (the grid, the detail's recommendations and each detected object's row in the "Find every
// product" view), the grid's states and the pager.

import { el, imageUrl, absoluteImageUrl } from './dom.js';

export const GRID_SIZES = '(max-width: 600px) 45vw, 220px';

function altText(item) {
  const values = item.value_map || {};
  const parts = [item.im_name];
  if (values.brand) parts.push(values.brand);
  if (values.description) parts.push(values.description);
  return parts.join(' — ');
}

function formatScore(score) {
  return typeof score === 'number' ? score.toFixed(3) : '';
}

/**
 * One result as a button: picture in a square box (no layout shift), name, score and the shown fields.
 * options: {fields: [names], eager: bool, sizes}
 */
export function resultCard(item, { fields = [], eager = false, sizes = GRID_SIZES } = {}) {
  const name = String(item.im_name);
  const values = item.value_map || {};
  const image = el('img', {
    class: 'result-image',
    src: imageUrl(name, 400),
    srcset: `${imageUrl(name, 400)} 400w, ${imageUrl(name, 800)} 800w`,
    sizes,
    alt: altText(item),
    width: 400,
    height: 400,
    loading: eager ? null : 'lazy',
    decoding: 'async',
  });
  image.addEventListener('error', () => image.closest('.result-thumb')?.classList.add('broken'), { once: true });
  const shown = fields.filter((f) => values[f] !== undefined && values[f] !== '');
  return el('button', { type: 'button', class: 'result', dataset: { imName: name } },
    el('span', { class: 'result-thumb' }, image),
    el('span', { class: 'result-name', text: name }),
    el('span', { class: 'result-score', text: formatScore(item.score) }),
    shown.length ? el('span', { class: 'result-fields' },
      shown.map((f) => el('span', { class: 'result-field', dataset: { field: f } },
        el('span', { class: 'result-field-name', text: f }), ' ', el('span', { class: 'result-field-value', text: values[f] })))) : null,
  );
}

/** How many cards the first row of a grid holds (those load eagerly). */
function columns(list) {
  const template = getComputedStyle(list).gridTemplateColumns;
  const count = template && template !== 'none' ? template.split(' ').length : 0;
  return count || 4;
}

/**
 * Fills a list with result cards. onOpen(item, product); tracker.observe(thumb, product) for product_view.
 * product = {queryId, pid, imUrl, pos} with pos 1-based across pages (offset = cards on earlier pages).
 */
export function renderCards(list, items, { fields, queryId, offset = 0, onOpen, tracker, sizes, eagerCount }) {
  tracker?.reset();
  const eager = eagerCount ?? columns(list);
  const cards = items.map((item, index) => {
    const product = { queryId, pid: String(item.im_name), imUrl: absoluteImageUrl(String(item.im_name), 400), pos: offset + index + 1 };
    const card = resultCard(item, { fields, eager: index < eager, sizes });
    card.addEventListener('click', () => onOpen(item, product));
    return { card, product };
  });
  list.replaceChildren(...cards.map(({ card }) => el('li', {}, card)));
  if (tracker && queryId) for (const { card, product } of cards) tracker.observe(card.querySelector('.result-thumb'), product);
}

/** Placeholder cells while the first results load, the size of real ones. */
export function renderSkeleton(list, count) {
  list.replaceChildren(...Array.from({ length: count }, () => el('li', { class: 'skeleton', 'aria-hidden': 'true' },
    el('span', { class: 'result-thumb' }), el('span', { class: 'skeleton-line' }), el('span', { class: 'skeleton-line short' }))));
}

/** #results data-state and aria-busy. */
export function setGridState(list, state, { reqid, total } = {}) {
  list.dataset.state = state;
  list.setAttribute('aria-busy', String(state === 'loading'));
  if (reqid !== undefined) {
    if (reqid) list.dataset.reqid = reqid; else delete list.dataset.reqid;
  }
  if (total !== undefined) {
    if (total === null) delete list.dataset.total; else list.dataset.total = String(total);
  }
}

/** The pager: prev/next enabled when there is such a page; the label says where we are. */
export function renderPager({ page, limit, total, count }) {
  const prev = document.getElementById('prev-page');
  const next = document.getElementById('next-page');
  const label = document.getElementById('page-number');
  const pages = total > 0 ? Math.ceil(total / limit) : 0;
  prev.disabled = page <= 1;
  next.disabled = pages ? page >= pages : count < limit;
  label.textContent = pages ? `Page ${page} of ${pages}` : page > 1 ? `Page ${page}` : '';
  label.dataset.page = String(page);
}

// ---- the "Find every product" view: a row per object a discover search detected --------------------------------

const CROP_SIZE = 96; // CSS pixels of the longer side of a row's crop

const sameBox = (a, b) => Boolean(a && b) && a.join(',') === b.join(',');

/** An object's score (0...1) with two decimals, or '' when it has none. */
export function objectScore(score) {
  return typeof score === 'number' && Number.isFinite(score) ? score.toFixed(2) : '';
}

/** "bag 0.82": what the box's label and the row's title say. */
export function objectLabel(object) {
  return [object.type, objectScore(object.score)].filter(Boolean).join(' ');
}

/** The object's crop of the query picture, drawn on a small canvas (nothing when the picture is not loaded). */
function crop(object, image) {
  const [x1, y1, x2, y2] = object.box;
  const w = x2 - x1;
  const h = y2 - y1;
  const loaded = image && !image.hidden && image.complete && image.naturalWidth > 0 &&
    x2 <= image.naturalWidth && y2 <= image.naturalHeight;
  if (!loaded) return null;
  const scale = Math.min(1, CROP_SIZE / Math.max(w, h));
  const canvas = el('canvas', { class: 'object-crop', role: 'img', 'aria-label': `The ${object.type} in your photo` });
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(w * scale * ratio));
  canvas.height = Math.max(1, Math.round(h * scale * ratio));
  canvas.style.setProperty('--crop-w', `${Math.max(1, Math.round(w * scale))}px`);
  canvas.style.setProperty('--crop-h', `${Math.max(1, Math.round(h * scale))}px`);
  const context = canvas.getContext('2d');
  context.imageSmoothingQuality = 'high';
  context.drawImage(image, x1, y1, w, h, 0, 0, canvas.width, canvas.height);
  return canvas;
}

/**
 * The "Find every product" rows: #objects-list gets one li.object-row per object — its crop, type and score, a
 * button searching it, and its results as the same cards as the main grid (renderCards).
 * options: {image, fields, queryId, onOpen(item, product), onSearch(box), selected}
 */
export function renderObjectRows(list, objects, { image, fields, queryId, onOpen, onSearch, selected }) {
  list.replaceChildren(...objects.map((object, index) => {
    const titleId = `object-title-${index}`;
    const results = el('ul', { class: 'grid grid-small object-results', 'aria-labelledby': titleId });
    renderCards(results, object.result, { fields, queryId, onOpen, eagerCount: 0 });
    if (!object.result.length) results.replaceChildren(el('li', { class: 'empty', text: 'No results for this object.' }));
    const total = Number(object.total) || 0;
    const search = el('button', { type: 'button', class: 'secondary object-search' }, 'Search this object');
    search.addEventListener('click', () => onSearch(object.box));
    const [x1, y1, x2, y2] = object.box;
    return el('li', {
      class: `object-row${sameBox(object.box, selected) ? ' selected' : ''}`,
      dataset: { type: object.type, score: objectScore(object.score), box: object.box.join(','), index: String(index) },
    },
    el('div', { class: 'object-head' },
      crop(object, image) || el('span', { class: 'object-crop object-crop-missing', 'aria-hidden': 'true' }),
      el('div', { class: 'object-text' },
        el('h3', { class: 'object-title', id: titleId },
          el('span', { class: 'object-type', text: object.type }), ' ',
          el('span', { class: 'object-score', text: objectScore(object.score) ? `score ${objectScore(object.score)}` : '' })),
        el('p', { class: 'object-meta', text: `${x2 - x1}×${y2 - y1} px at ${x1}, ${y1} · ${total} results, the first ${object.result.length} shown` }),
        search)),
    results);
  }));
}

