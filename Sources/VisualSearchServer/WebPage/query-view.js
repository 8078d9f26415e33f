// query-view.js — the query panel (#query-view): the query picture or colour, its caption, the box editor on it, and
// the objects a discover search (`/discoversearch`) found in an uploaded photo: a labelled box for each (a button:
// clicking it, or Enter on it, searches that object as if its box had been drawn) and a short note under the picture.
//
// Boxes are in the query picture's own pixels, [x1, y1, x2, y2] with right/bottom exclusive, like `box=`.

import { createBoxEditor } from './box.js';
import { el, imageUrl } from './dom.js';
import { objectLabel, objectScore } from './results.js';

const sameBox = (a, b) => (a && b ? a.join(',') === b.join(',') : a === b);

// ---- detected objects ----------------------------------------------------------------------------------------

/** Types a server gives a region it did not detect (the whole picture, a box or point it was asked about). */
const NOT_DETECTED = new Set(['image', 'box', 'point']);

function validBox(box, size) {
  if (!Array.isArray(box) || box.length !== 4 || !box.every((v) => Number.isFinite(v))) return false;
  const [x1, y1, x2, y2] = box;
  if (!(x1 >= 0 && y1 >= 0 && x2 > x1 && y2 > y1)) return false;
  return !size || (x2 <= size.w && y2 <= size.h);
}

/**
 * What a discover answer says about the picture: {objects, off}. `objects` are the detected ones (a product
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

/** The note under the picture: what was found, or why nothing is shown. */
export function describeObjects({ objects, off }, onPicture = true) {
  if (off) return 'Object detection is off on this server.';
  if (!objects.length) return 'No separate products were found in this photo.';
  const types = objects.map((o) => o.type);
  const count = objects.length === 1 ? 'One product found' : `${objects.length} products found`;
  return `${count} (${types.join(', ')})${onPicture ? ': click a box to search it.' : '.'}`;
}

/**
 * The boxes on the picture: #objects-layer inside #query-frame, under the selection box.
 * onPick(box): search this object. tap(target) is the box editor's hook: a click (no drag) on an object picks it.
 */
function createObjectLayer({ layer, onPick }) {
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
      const isSelected = Boolean(selected) && sameBox(object.box, selected);
      const button = el('button', {
        type: 'button',
        class: `object-box${isSelected ? ' selected' : ''}${x1 / size.w > 0.6 ? ' label-right' : ''}`,
        'aria-pressed': String(isSelected),
        'aria-label': `Search the ${object.type}${objectScore(object.score) ? ` (score ${objectScore(object.score)})` : ''} at ${x1},${y1} to ${x2},${y2}`,
        dataset: { type: object.type, score: objectScore(object.score), box: object.box.join(','), index: String(index) },
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
        const on = Boolean(selected) && sameBox(button.dataset.box.split(',').map(Number), selected);
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

// ---- the query panel -------------------------------------------------------------------------------------------

function describeBox(box) {
  if (!box) return 'Selection: the whole picture';
  const [x1, y1, x2, y2] = box;
  return x1 === x2 && y1 === y2 ? `Selection: point ${x1}, ${y1}` : `Selection: ${x1}, ${y1} – ${x2}, ${y2} (${x2 - x1}×${y2 - y1} px)`;
}

function sameOrigin(url) {
  try { return new URL(url, location.href).origin === location.origin; } catch { return false; }
}

/**
 * onBoxCommit(box | null): search with this box (drawn, or a detected object's). The returned `objects` is the
 * layer of detected objects on the picture (above): set(list), setSize(w, h), select(box), tap(target).
 */
export function createQueryView({ onBoxCommit }) {
  const byId = (id) => document.getElementById(id);
  const view = byId('query-view');
  const frame = byId('query-frame');
  const image = byId('query-image');
  const swatch = byId('query-swatch');
  const title = byId('query-title');
  const caption = byId('query-caption');
  const boxText = byId('box-text');
  const boxSearch = byId('box-search');
  const boxClear = byId('box-clear');
  const boxHelp = byId('box-help');

  let committed = null; // the box of the search on screen
  let boxAllowed = false; // colour searches have no box
  let pending = null; // the box being edited
  let hasPicture = false;

  function updateBoxControls(box) {
    pending = box;
    boxText.textContent = boxAllowed && (hasPicture || box) ? describeBox(box) : '';
    boxSearch.hidden = !boxAllowed || sameBox(box, committed);
    boxClear.hidden = !boxAllowed || (!box && !committed);
  }

  const objects = createObjectLayer({ layer: byId('objects-layer'), onPick: (box) => onBoxCommit(box) });

  const editor = createBoxEditor({
    frame, image, box: byId('box'),
    onChange: updateBoxControls,
    onCommit: (box) => onBoxCommit(box),
    onTap: (target) => objects.tap(target),
  });

  image.addEventListener('load', () => {
    editor.setSize(image.naturalWidth, image.naturalHeight);
    objects.setSize(image.naturalWidth, image.naturalHeight);
  });
  image.addEventListener('error', () => {
    if (!image.getAttribute('src')) return;
    image.hidden = true;
    editor.setSize(0, 0);
    objects.setSize(0, 0);
    caption.textContent = `${caption.textContent} (the picture cannot be shown)`;
  });
  boxSearch.addEventListener('click', () => onBoxCommit(pending));
  boxClear.addEventListener('click', () => onBoxCommit(null));

  function setPicture(src) {
    hasPicture = Boolean(src);
    byId('query-frame').parentElement.hidden = !src && swatch.hidden;
    if (!src) {
      image.removeAttribute('src');
      image.hidden = true;
      frame.hidden = true;
      editor.setSize(0, 0);
      objects.setSize(0, 0);
      return;
    }
    frame.hidden = false;
    image.hidden = false;
    if (image.getAttribute('src') !== src) {
      editor.setSize(0, 0);
      objects.setSize(0, 0);
      image.src = src;
    } else if (image.complete && image.naturalWidth) {
      editor.setSize(image.naturalWidth, image.naturalHeight);
      objects.setSize(image.naturalWidth, image.naturalHeight);
    }
  }

  return {
    objects,
    /** picture: {url, width, height} of an upload kept in memory, if any. */
    show(state, picture) {
      view.hidden = !state.q;
      if (state.q !== 'upload') objects.set([]); // only an uploaded photo is looked through for objects
      if (!state.q) {
        setPicture('');
        return;
      }
      view.dataset.kind = state.q;
      boxAllowed = state.q !== 'color';
      swatch.hidden = state.q !== 'color';
      let src = '';
      if (state.q === 'similar') {
        title.textContent = 'Similar to';
        caption.textContent = state.imName;
        src = imageUrl(state.imName);
        image.alt = `Query picture: ${state.imName}`;
      } else if (state.q === 'upload') {
        title.textContent = 'Your photo';
        if (picture) {
          caption.textContent = `Uploaded photo, ${picture.width}×${picture.height} px as sent`;
          src = picture.url;
        } else {
          caption.textContent = 'Uploaded photo (not shown after a reload; the server still has it for searching)';
        }
        image.alt = 'Query picture: your uploaded photo';
      } else if (state.q === 'url') {
        title.textContent = 'Picture from a URL';
        caption.textContent = state.imUrl;
        src = sameOrigin(state.imUrl) ? state.imUrl : '';
        if (!src) caption.textContent = `${state.imUrl} (pictures from other sites are not shown here)`;
        image.alt = 'Query picture from the URL';
      } else {
        title.textContent = 'Colour';
        caption.textContent = `#${state.color}`;
        swatch.style.setProperty('--swatch', `#${state.color}`);
      }
      setPicture(src);
      boxHelp.hidden = !src;
      committed = state.box;
      editor.setBox(state.box);
      objects.select(state.box);
    },
  };
}
