// results.js — result cards (the grid and the detail's recommendations), the grid's states and the pager.

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
