// detail.js — the detail dialog (#detail): one catalog item's picture, all its metadata, and "You may also like".

import * as api from './api.js';
import { el, imageUrl } from './dom.js';
import { renderCards } from './results.js';
import { showAnswered } from './similarity.js';
import * as tracking from './tracking.js';

const COLOR = /^#[0-9a-f]{6}$/i;
const RECS = 12;

function metadataRow(field, value) {
  const text = String(value);
  const cell = el('td', {}, text);
  if (COLOR.test(text)) {
    const swatch = el('span', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.setProperty('--swatch', text);
    cell.prepend(swatch);
  }
  return el('tr', { dataset: { field } }, el('th', { scope: 'row', text: field }), cell);
}

/** onSimilar(imName): make this item the query; similarity(): the one chosen ('' = the server's default). */
export function createDetail({ onSimilar, similarity = () => '' }) {
  const dialog = document.getElementById('detail');
  const name = document.getElementById('detail-name');
  const image = document.getElementById('detail-image');
  const table = document.getElementById('detail-metadata');
  const recs = document.getElementById('detail-recommendations');
  const similar = document.getElementById('detail-similar');
  const recsLabel = document.getElementById('detail-similarity');
  const tracker = tracking.createViewTracker();
  let current = '';
  let controller = null;

  document.getElementById('detail-close').addEventListener('click', () => dialog.close());
  // A click on the backdrop (the dialog element itself, outside its content box) closes it.
  dialog.addEventListener('click', (event) => {
    if (event.target !== dialog) return;
    const r = dialog.getBoundingClientRect();
    const inside = event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
    if (!inside) dialog.close();
  });
  dialog.addEventListener('close', () => {
    controller?.abort();
    tracker.reset();
    recs.replaceChildren(); // no hidden .result items linger outside #results
    recs.dataset.state = 'idle';
    showAnswered(recsLabel, recs, '');
  });
  similar.addEventListener('click', () => {
    dialog.close();
    onSimilar(current);
  });

  async function loadMetadata(imName, signal) {
    const body = table.tBodies[0];
    body.replaceChildren(el('tr', { class: 'loading-row' }, el('td', { colspan: 2, text: 'Loading…' })));
    try {
      // The best match of a search for an indexed image is the image itself (score 1).
      const data = await api.search({ im_name: imName, get_all_fl: true, limit: 3 }, signal);
      const item = (data.result || []).find((r) => r.im_name === imName);
      const values = (item && item.value_map) || {};
      const fields = Object.keys(values).sort();
      image.alt = [imName, values.brand, values.description].filter(Boolean).join(' — ');
      body.replaceChildren(...(fields.length ? fields.map((f) => metadataRow(f, values[f]))
        : [el('tr', { class: 'empty-row' }, el('td', { colspan: 2, text: 'No metadata.' }))]));
    } catch (error) {
      if (error.name === 'AbortError') return;
      body.replaceChildren(el('tr', { class: 'empty-row' }, el('td', { colspan: 2, text: error.message })));
    }
  }

  async function loadRecommendations(imName, signal) {
    recs.dataset.state = 'loading';
    recs.replaceChildren();
    showAnswered(recsLabel, recs, '');
    try {
      const data = await api.recommendations({
        im_name: imName, limit: RECS, score: true, fl: ['brand', 'description'], similarity: similarity(),
      }, signal);
      const items = data.result || [];
      showAnswered(recsLabel, recs, data.similarity);
      tracking.resultLoad(data.reqid);
      renderCards(recs, items, {
        queryId: data.reqid, tracker, sizes: '(max-width: 600px) 45vw, 160px', eagerCount: 0,
        onOpen: (item, product) => {
          tracking.productClick(product);
          show(item.im_name);
        },
      });
      if (!items.length) recs.replaceChildren(el('li', { class: 'empty', text: 'No recommendations for this item.' }));
      recs.dataset.state = 'ready';
    } catch (error) {
      if (error.name === 'AbortError') return;
      recs.replaceChildren(el('li', { class: 'empty', text: error.message }));
      recs.dataset.state = 'error';
    }
  }

  function show(imName) {
    controller?.abort();
    controller = new AbortController();
    current = imName;
    name.textContent = imName;
    image.srcset = `${imageUrl(imName, 800)} 800w, ${imageUrl(imName, 1200)} 1200w`;
    image.sizes = '(max-width: 700px) 90vw, 420px';
    image.src = imageUrl(imName, 800);
    image.alt = imName;
    dialog.scrollTop = 0;
    loadMetadata(imName, controller.signal);
    loadRecommendations(imName, controller.signal);
  }

  return {
    open(imName) {
      show(imName);
      if (!dialog.open) dialog.showModal();
      document.getElementById('detail-close').focus();
    },
    close() { if (dialog.open) dialog.close(); },
  };
}
