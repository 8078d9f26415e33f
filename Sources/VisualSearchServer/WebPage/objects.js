// objects.js — the objects a discover search (`/discoversearch`) found in an uploaded photo: a labelled box on the
// picture for each (a button: clicking it, or Enter on it, searches that object as if its box had been drawn), a
// short note under the picture, and the "Find every product" view (one row per object with its own results).
//
// Boxes are in the query picture's own pixels, [x1, y1, x2, y2] with right/bottom exclusive, like `box=`.

import { el } from './dom.js';
import { renderCards } from './results.js';

/** Types a server gives a region it did not detect (the whole picture, a box or point it was asked about). */
const NOT_DETECTED = new Set(['image', 'box', 'point']);

const CROP_SIZE = 96; // CSS pixels of the longer side of a row's crop

function validBox(box, size) {
  if (!Array.isArray(box) || box.length !== 4 || !box.every((v) => Number.isFinite(v))) return false;
  const [x1, y1, x2, y2] = box;
  if (!(x1 >= 0 && y1 >= 0 && x2 > x1 && y2 > y1)) return false;
  return !size || (x2 <= size.w && y2 <= size.h);
}

const sameBox = (a, b) => Boolean(a && b) && a.join(',') === b.join(',');

export function formatScore(score) {
  return typeof score === 'number' && Number.isFinite(score) ? score.toFixed(2) : '';
}

/** "bag 0.82": what the box's label and the row's title say. */
export function objectLabel(object) {
  return [object.type, formatScore(object.score)].filter(Boolean).join(' ');
}

/**
 * What a discover answer says about the picture: {objects, off, note}. `objects` are the detected ones (a product
 * type and a box each, best first as the server ranks them); `off` is true when the server has no detector (its
 * answer is the whole picture as one object and an `offline_note`).
 */
export function readDiscover(data) {
  const all = Array.isArray(data && data.objects) ? data.objects : [];
  const objects = all
    .filter((o) => o && typeof o.type === 'string' && o.type && !NOT_DETECTED.has(o.type) && validBox(o.box))
    .map((o) => ({ ...o, box: o.box.map(Math.round), result: Array.isArray(o.result) ? o.result : [] }));
  const off = !objects.length && (Boolean(data && data.offline_note) || all.some((o) => o && NOT_DETECTED.has(o.type)));
  return { objects, off };
}

/**
 * The boxes on the picture: #objects-layer inside #query-frame, under the selection box.
 * onPick(box): search this object. tap(target) is the box editor's hook: a click (no drag) on an object picks it.
 */
export function createObjectLayer({ layer, onPick }) {
  let objects = [];
  let size = null; // the picture's pixels, once it has loaded
  let selected = null;
  let pointerPressed = false; // a pointer press on an object: the box editor handles it, not the click that follows

  function render() {
    const shown = size ? objects.filter((o) => validBox(o.box, size)) : [];
    layer.hidden = !shown.length;
    const pct = (v, total) => ((v / total) * 100).toFixed(3);
    layer.replaceChildren(...shown.map((object, index) => {
      const [x1, y1, x2, y2] = object.box;
      const isSelected = sameBox(object.box, selected);
      const button = el('button', {
        type: 'button',
        class: `object-box${isSelected ? ' selected' : ''}${x1 / size.w > 0.6 ? ' label-right' : ''}`,
        'aria-pressed': String(isSelected),
        'aria-label': `Search the ${object.type}${formatScore(object.score) ? ` (score ${formatScore(object.score)})` : ''} at ${x1},${y1} to ${x2},${y2}`,
        dataset: { type: object.type, score: formatScore(object.score), box: object.box.join(','), index: String(index) },
      }, el('span', { class: 'object-label', 'aria-hidden': 'true', text: objectLabel(object) }));
      button.style.setProperty('--x1', pct(x1, size.w));
      button.style.setProperty('--y1', pct(y1, size.h));
      button.style.setProperty('--x2', pct(x2, size.w));
      button.style.setProperty('--y2', pct(y2, size.h));
      return button;
    }));
  }

  layer.addEventListener('pointerdown', (event) => { if (event.target.closest('.object-box')) pointerPressed = true; });
  layer.addEventListener('keydown', () => { pointerPressed = false; });
  layer.addEventListener('click', (event) => {
    const button = event.target.closest('.object-box');
    if (!button) return;
    if (pointerPressed) { // the pointer's press and release went through the box editor (tap below)
      pointerPressed = false;
      return;
    }
    onPick(button.dataset.box.split(',').map(Number)); // Enter or Space, or an assistive technology's click
  });

  return {
    set(list) {
      objects = Array.isArray(list) ? list : [];
      render();
    },
    setSize(width, height) {
      size = width > 0 && height > 0 ? { w: width, h: height } : null;
      render();
    },
    /** The committed box: the object with this very box is marked selected. */
    select(box) {
      selected = box ? [...box] : null;
      for (const button of layer.querySelectorAll('.object-box')) {
        const on = sameBox(button.dataset.box.split(',').map(Number), selected);
        button.classList.toggle('selected', on);
        button.setAttribute('aria-pressed', String(on));
      }
    },
    /** A click without a drag on target: true (and the object searched) when it is one of the boxes. */
    tap(target) {
      const button = target && target.closest ? target.closest('#objects-layer .object-box') : null;
      if (!button) return false;
      onPick(button.dataset.box.split(',').map(Number));
      return true;
    },
  };
}

/** The object's crop of the query picture, drawn on a small canvas (nothing when the picture is not loaded). */
function crop(object, image) {
  const [x1, y1, x2, y2] = object.box;
  const w = x2 - x1;
  const h = y2 - y1;
  const scale = Math.min(1, CROP_SIZE / Math.max(w, h));
  const canvas = el('canvas', { class: 'object-crop', role: 'img', 'aria-label': `The ${object.type} in your photo` });
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(w * scale * ratio));
  canvas.height = Math.max(1, Math.round(h * scale * ratio));
  canvas.style.setProperty('--crop-w', `${Math.max(1, Math.round(w * scale))}px`);
  canvas.style.setProperty('--crop-h', `${Math.max(1, Math.round(h * scale))}px`);
  const loaded = image && !image.hidden && image.complete && image.naturalWidth > 0 &&
    x2 <= image.naturalWidth && y2 <= image.naturalHeight;
  if (!loaded) return null;
  const context = canvas.getContext('2d');
  context.imageSmoothingQuality = 'high';
  context.drawImage(image, x1, y1, w, h, 0, 0, canvas.width, canvas.height);
  return canvas;
}

/**
 * The "Find every product" rows: #objects-list gets one li.object-row per object — its crop, type and score, a
 * button searching it, and its results as the same cards as the main grid (results.js).
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
      dataset: { type: object.type, score: formatScore(object.score), box: object.box.join(','), index: String(index) },
    },
    el('div', { class: 'object-head' },
      crop(object, image) || el('span', { class: 'object-crop object-crop-missing', 'aria-hidden': 'true' }),
      el('div', { class: 'object-text' },
        el('h3', { class: 'object-title', id: titleId },
          el('span', { class: 'object-type', text: object.type }), ' ',
          el('span', { class: 'object-score', text: formatScore(object.score) ? `score ${formatScore(object.score)}` : '' })),
        el('p', { class: 'object-meta', text: `${x2 - x1}×${y2 - y1} px at ${x1}, ${y1} · ${total} results, the first ${object.result.length} shown` }),
        search)),
    results);
  }));
}

/** The note under the picture: what was found, or why nothing is shown. */
export function describeObjects({ objects, off }, onPicture = true) {
  if (off) return 'Object detection is off on this server.';
  if (!objects.length) return 'No separate products were found in this photo.';
  const types = objects.map((o) => o.type);
  const count = objects.length === 1 ? 'One product found' : `${objects.length} products found`;
  return `${count} (${types.join(', ')})${onPicture ? ': click a box to search it.' : '.'}`;
}
