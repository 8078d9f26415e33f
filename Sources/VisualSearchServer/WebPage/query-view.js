// query-view.js — the query panel (#query-view): the query picture or colour, its caption, and the box editor on it.

import { createBoxEditor } from './box.js';
import { imageUrl } from './dom.js';
import { createObjectLayer } from './objects.js';

const sameBox = (a, b) => (a && b ? a.join(',') === b.join(',') : a === b);

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
 * layer of detected objects on the picture (objects.js): set(list), select(box).
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
