// app.js — the search page's entry point: wires the query inputs, URL state, searches, results, facets,
// the detail dialog, keys and tracking together. The server is only reached through api.js.

import * as api from './api.js';
import { absoluteImageUrl, el, setText } from './dom.js';
import { PAGE_SIZE, parseState, toSearch, withFilter, withQuery } from './state.js';
import { resizeForUpload, setupQueryInputs, showQueryInInputs } from './query.js';
import { createQueryView, describeObjects, readDiscover } from './query-view.js';
import { renderCards, renderObjectRows, renderPager, renderSkeleton, setGridState } from './results.js';
import { renderChips, renderFacets, setupTextSearch } from './facets.js';
import { facetFields, renderFieldChooser, requestedFields, setFields, shownFields } from './fields.js';
import { createDetail } from './detail.js';
import { createSimilaritySwitch, showAnswered } from './similarity.js';
import { setupKeys } from './keys.js';
import * as tracking from './tracking.js';

const byId = (id) => document.getElementById(id);
const grid = byId('results');
const errorLine = byId('error');
const statusLine = byId('status');
const heading = byId('results-heading');
const facetsPanel = byId('facets');
const chips = byId('active-filters');
const similarityLabel = byId('similarity-label');

let state = parseState(location.search);
let controller = null;
let fieldsLoaded = false;
let focusResults = false;
let focusObjects = false;
const uploads = new Map(); // im_id → {blob, url, width, height}: photos uploaded from this tab
const OBJECT_RESULTS = 8; // results per object in the "Find every product" view
const discovered = new Map(); // the discover query (im_id, filters, similarity, fields) → its answer
let objectsShown = ''; // the im_id whose objects are on the picture
let pendingUpload = null; // the photo being sent, before the server names it
const tracker = tracking.createViewTracker();

const showError = (message) => setText(errorLine, message);
const setStatus = (text) => { statusLine.textContent = text; };

/** Puts a state in the address bar: a new history entry, or replacing the current one. */
function writeUrl(next, replace = false) {
  const url = `${location.pathname}${toSearch(next)}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

/** A new state: pushed to the history, then searched. */
function navigate(next) {
  state = next;
  writeUrl(next);
  run();
}

function setFilter(field, value) {
  navigate(field === null ? { ...state, fq: [], page: 1 } : withFilter(state, field, value));
}

// ---- the parts ------------------------------------------------------------------------------------

// A box drawn, or a detected object picked: its search, shown as results.
const queryView = createQueryView({
  onBoxCommit: (box) => navigate({ ...state, box, page: 1, view: '' }),
});

const detail = createDetail({
  onSimilar: (imName) => {
    focusResults = true;
    window.scrollTo({ top: 0 });
    navigate(withQuery(state, { q: 'similar', imName }));
  },
  similarity: () => state.similarity, // "You may also like" follows the switch
});

// Another similarity re-runs the same query (box and filters kept) from its first page.
const similaritySwitch = createSimilaritySwitch({
  onChoose: (similarity) => navigate({ ...state, similarity, page: 1 }),
});

const textSearch = setupTextSearch(setFilter);

const keys = setupKeys(() => {
  fieldsLoaded = false;
  run();
});

setupQueryInputs({
  onFile: async (file) => {
    showError('');
    setStatus('Preparing the photo…');
    try {
      const resized = await resizeForUpload(file);
      pendingUpload = { ...resized, url: URL.createObjectURL(resized.blob) };
    } catch (error) {
      setStatus('');
      showError(error.message);
      return;
    }
    navigate(withQuery(state, { q: 'upload' }));
  },
  onUrl: (imUrl) => navigate(withQuery(state, { q: 'url', imUrl })),
  onColor: (color) => navigate(withQuery(state, { q: 'color', color })),
  onError: (message) => showError(message),
});

byId('prev-page').addEventListener('click', () => {
  focusResults = true;
  navigate({ ...state, page: Math.max(1, state.page - 1) });
});
byId('next-page').addEventListener('click', () => {
  focusResults = true;
  navigate({ ...state, page: state.page + 1 });
});

const facetsToggle = byId('facets-toggle');
facetsToggle.addEventListener('click', () => {
  const open = facetsToggle.getAttribute('aria-expanded') !== 'true';
  facetsToggle.setAttribute('aria-expanded', String(open));
  byId('sidebar').classList.toggle('open', open);
});

// "Find every product": the objects view in place of the results, and back.
const objectsToggle = byId('objects-toggle');
objectsToggle.addEventListener('click', () => {
  focusObjects = state.view !== 'objects';
  navigate({ ...state, view: state.view === 'objects' ? '' : 'objects' });
});
byId('objects-back').addEventListener('click', () => {
  focusResults = true;
  navigate({ ...state, view: '' });
});

window.addEventListener('popstate', () => {
  detail.close();
  state = parseState(location.search);
  run();
});

// ---- fields (facets, fl) -------------------------------------------------------------------------------

function applyFields(list) {
  fieldsLoaded = true;
  if (setFields(list)) renderFieldChooser(byId('fields-options'), () => run());
}

async function loadFields(signal) {
  try {
    const data = await api.catalog({ page: 1, limit: 1 }, signal);
    applyFields(data.fields);
  } catch (error) {
    if (error.name === 'AbortError' || error.status === 401) throw error;
    fieldsLoaded = true; // no field list: search without facets
  }
}

// ---- searching -------------------------------------------------------------------------------------

function searchParams(s) {
  const facets = facetFields();
  return {
    limit: PAGE_SIZE,
    page: s.page,
    score: true,
    fl: requestedFields(),
    fq: s.fq,
    similarity: s.q === 'color' ? '' : s.similarity, // '' is left out: the server's default answers
    ...(facets.length ? { facets, facets_show_count: true, facets_limit: 10 } : {}),
  };
}

async function uploadSearch(s, params, signal) {
  const picture = s.imId ? uploads.get(s.imId) : pendingUpload;
  if (s.imId) {
    try {
      return await api.uploadSearchBy({ ...params, im_id: s.imId }, signal);
    } catch (error) {
      // The server no longer knows this im_id (restarted, expired): send the photo again if this tab has it.
      const retry = picture && error.name !== 'AbortError' && error.status >= 400 && error.status < 500 && error.status !== 401;
      if (!retry) throw error;
    }
  }
  if (!picture) throw new Error('Choose a photo to search with.');
  setStatus('Uploading the photo…');
  const data = await api.uploadSearch(picture.blob, params, signal);
  if (data.im_id) uploads.set(String(data.im_id), picture);
  return data;
}

function search(s, signal) {
  const params = searchParams(s);
  const box = s.box ? s.box.join(',') : undefined;
  switch (s.q) {
    case 'similar': return api.search({ ...params, im_name: s.imName, box }, signal);
    case 'color': return api.colorSearch({ ...params, color: s.color }, signal);
    case 'url': return api.uploadSearchBy({ ...params, im_url: s.imUrl, box }, signal);
    default: return uploadSearch(s, { ...params, box }, signal);
  }
}

async function browse(s, signal) {
  const data = await api.catalog({ page: s.page, limit: PAGE_SIZE }, signal);
  if (Array.isArray(data.fields)) applyFields(data.fields);
  return data;
}

const pictureFor = (s) => (s.q === 'upload' ? (s.imId ? uploads.get(s.imId) : pendingUpload) || null : null);

function openResult(item, product) {
  tracking.productClick(product);
  detail.open(String(item.im_name));
}

function afterRender() {
  if (!focusResults) return;
  focusResults = false;
  heading.focus({ preventScroll: true });
  if (heading.getBoundingClientRect().top < 0) heading.scrollIntoView({ block: 'start' });
}

function show(data, s) {
  const searching = Boolean(s.q);
  const items = Array.isArray(data.result) ? data.result : [];
  const total = Number((searching ? data.total : data.images ?? data.total) ?? items.length) || 0;
  const reqid = searching && data.reqid ? String(data.reqid) : '';
  const offset = (s.page - 1) * PAGE_SIZE;

  // An upload search names the photo: the URL gets its im_id (replacing the entry pushed for the upload).
  if (s.q === 'upload' && data.im_id && String(data.im_id) !== s.imId) {
    state = { ...s, imId: String(data.im_id) };
    if (!s.imId) pendingUpload = null;
    writeUrl(state, true);
  }

  renderCards(grid, items, { fields: shownFields(), queryId: reqid, offset, tracker, onOpen: openResult });
  if (!items.length) {
    grid.replaceChildren(el('li', { class: 'empty', text: s.page > 1 ? 'No results on this page.' : 'No results.' }));
  }
  setGridState(grid, 'ready', { reqid, total });
  const answered = searching && s.q !== 'color' ? data.similarity : ''; // a colour search is by colour, nothing to say
  similaritySwitch.answered(answered);
  showAnswered(similarityLabel, grid, answered);
  renderPager({ page: s.page, limit: PAGE_SIZE, total, count: items.length });
  renderFacets(facetsPanel, searching ? (data.facets || []) : null, s, setFilter);
  byId('result-count').textContent = items.length ? `${offset + 1}–${offset + items.length} of ${total}` : `0 of ${total}`;
  byId('reqid').textContent = reqid ? `reqid ${reqid}` : '';
  const warning = data.status === 'warning' && Array.isArray(data.error) && data.error.length ? ` ${data.error[0]}` : '';
  setStatus(searching ? `${total} results, page ${s.page}.${warning}` : `Catalog: ${total} images, page ${s.page}.`);
  if (reqid) tracking.resultLoad(reqid, describeQuery(s));
  afterRender();
}

/** What a search was, for its result_load event: the query picture (when it has one) and a short label. */
function describeQuery(s) {
  switch (s.q) {
    case 'similar': return { imUrl: absoluteImageUrl(s.imName, 400), label: `similar:${s.imName}` };
    case 'url': return { imUrl: s.imUrl, label: 'url' };
    case 'color': return { label: `color:${s.color}` };
    case 'upload': return { label: 'upload' };
    default: return {};
  }
}

function showFailure(error) {
  showError(error.message || 'Something went wrong.');
  setStatus('');
  grid.replaceChildren();
  setGridState(grid, 'error', { reqid: error.body && error.body.reqid ? String(error.body.reqid) : '', total: null });
  similaritySwitch.answered(''); // still usable: another similarity may answer
  showAnswered(similarityLabel, grid, '');
  byId('result-count').textContent = '';
  byId('reqid').textContent = error.body && error.body.reqid ? `reqid ${error.body.reqid}` : '';
  renderPager({ page: state.page, limit: PAGE_SIZE, total: 0, count: 0 });
  byId('prev-page').disabled = true;
  byId('next-page').disabled = true;
  facetsPanel.replaceChildren();
  byId('facets-note').textContent = '';
}

async function run() {
  controller?.abort();
  const ctl = new AbortController();
  controller = ctl;
  const s = state;
  const searching = Boolean(s.q);

  showError('');
  showView(s);
  queryView.show(s, pictureFor(s));
  similaritySwitch.show(s);
  showAnswered(similarityLabel, grid, '');
  showQueryInInputs(s);
  renderChips(chips, s, setFilter);
  facetsToggle.textContent = s.fq.length ? `Filters (${s.fq.length})` : 'Filters';
  heading.textContent = searching ? 'Results' : 'Catalog';
  byId('fields-chooser').classList.toggle('unused', !searching); // the catalog browser has no metadata to show
  textSearch.update(s, searching);
  if (!grid.querySelector('.result')) renderSkeleton(grid, PAGE_SIZE);
  byId('main').hidden = false; // shown once laid out for this state (hidden in the HTML: no shift on start)
  setGridState(grid, 'loading');
  setStatus(searching ? 'Searching…' : 'Loading the catalog…');

  try {
    if (searching && !fieldsLoaded) await loadFields(ctl.signal);
    textSearch.update(s, searching);
    const data = searching ? await search(s, ctl.signal) : await browse(s, ctl.signal);
    if (ctl.signal.aborted) return;
    show(data, s);
  } catch (error) {
    if (error.name === 'AbortError' || ctl.signal.aborted) return;
    showFailure(error);
    if (s.view === 'objects') {
      objectsSection.dataset.state = 'error';
      objectsList.replaceChildren();
    }
    return;
  }
  await loadObjects(state, ctl.signal); // state: with the im_id the upload search named
}

// ---- detected objects (/discoversearch of an uploaded photo) -------------------------------------------

const objectsLayer = byId('objects-layer');
const objectsNote = byId('objects-note');
const objectsSection = byId('objects');
const objectsList = byId('objects-list');

/** The results, or the "Find every product" view in their place. */
function showView(s) {
  const objectsView = s.q === 'upload' && s.view === 'objects';
  objectsSection.hidden = !objectsView;
  for (const id of ['results-head', 'results-wrap', 'pager']) byId(id).hidden = objectsView;
  objectsToggle.setAttribute('aria-pressed', String(objectsView));
  if (objectsView) setObjectsLoading(true); // until the upload search and the discover search have answered
  if (s.q !== 'upload' || !s.imId || s.imId !== objectsShown) { // another photo (or none): its objects are not known yet
    objectsShown = '';
    queryView.objects.set([]);
    objectsToggle.hidden = true;
    objectsLayer.dataset.state = 'idle';
    delete objectsLayer.dataset.count;
    setText(objectsNote, '');
  }
}

const discoverKey = (s) => JSON.stringify([s.imId, s.fq, s.similarity, requestedFields()]);

async function discover(s, signal) {
  const params = {
    result_limit: OBJECT_RESULTS,
    score: true,
    fl: requestedFields(),
    fq: s.fq,
    similarity: s.similarity,
  };
  try {
    return await api.discoverSearchBy({ ...params, im_id: s.imId }, signal);
  } catch (error) {
    // The server no longer knows this im_id: send the photo again if this tab has it (as uploadSearch does).
    const picture = uploads.get(s.imId);
    const retry = picture && error.name !== 'AbortError' && error.status >= 400 && error.status < 500 && error.status !== 401;
    if (!retry) throw error;
    return api.discoverSearch(picture.blob, params, signal);
  }
}

/** After an upload search: the objects of its photo on the picture, and in the objects view their results. */
async function loadObjects(s, signal) {
  if (s.q !== 'upload' || !s.imId) return;
  const key = discoverKey(s);
  let data = discovered.get(key);
  if (!data) {
    objectsLayer.dataset.state = 'loading';
    setText(objectsNote, 'Looking for the products in your photo…');
    if (s.view === 'objects') setObjectsLoading(true);
    try {
      data = await discover(s, signal);
    } catch (error) {
      if (error.name === 'AbortError' || signal.aborted) return;
      objectsLayer.dataset.state = 'error';
      setText(objectsNote, `The products in this photo could not be found: ${error.message}`);
      if (s.view === 'objects') showObjectsFailure(error);
      return;
    }
    if (signal.aborted) return;
    discovered.set(key, data);
    if (discovered.size > 20) discovered.delete(discovered.keys().next().value); // the oldest answer goes
  }
  const found = readDiscover(data);
  objectsShown = s.imId;
  queryView.objects.set(found.objects);
  queryView.objects.select(s.box);
  objectsLayer.dataset.state = found.off ? 'off' : 'ready';
  objectsLayer.dataset.count = String(found.objects.length);
  setText(objectsNote, describeObjects(found, Boolean(pictureFor(s))));
  objectsToggle.dataset.label = found.objects.length ? `Find every product (${found.objects.length})` : 'Find every product';
  objectsToggle.hidden = !found.objects.length && s.view !== 'objects';
  objectsToggle.textContent = objectsToggle.dataset.label;
  if (s.view === 'objects') showObjects(found, data, s);
}

function setObjectsLoading(loading) {
  objectsSection.dataset.state = loading ? 'loading' : objectsSection.dataset.state;
  objectsList.setAttribute('aria-busy', String(loading));
}

function showObjects(found, data, s) {
  const reqid = data.reqid ? String(data.reqid) : '';
  renderObjectRows(objectsList, found.objects, {
    image: byId('query-image'),
    fields: shownFields(),
    queryId: reqid,
    onOpen: openResult,
    onSearch: (box) => {
      focusResults = true;
      window.scrollTo({ top: 0 });
      navigate({ ...state, box, page: 1, view: '' });
    },
    selected: s.box,
  });
  if (!found.objects.length) {
    objectsList.replaceChildren(el('li', { class: 'empty', text: describeObjects(found) }));
  }
  objectsSection.dataset.state = 'ready';
  objectsSection.dataset.count = String(found.objects.length);
  if (reqid) objectsSection.dataset.reqid = reqid; else delete objectsSection.dataset.reqid;
  objectsList.setAttribute('aria-busy', 'false');
  byId('objects-meta').textContent = found.objects.length
    ? `${found.objects.length} ${found.objects.length === 1 ? 'product' : 'products'}, the first ${OBJECT_RESULTS} results of each`
    : '';
  setStatus(found.off ? 'Object detection is off on this server.' : `${found.objects.length} products found in your photo.`);
  if (focusObjects) {
    focusObjects = false;
    byId('objects-heading').focus({ preventScroll: true });
  }
}

function showObjectsFailure(error) {
  objectsSection.dataset.state = 'error';
  objectsList.setAttribute('aria-busy', 'false');
  objectsList.replaceChildren();
  byId('objects-meta').textContent = '';
  showError(`The products in this photo could not be found: ${error.message || 'something went wrong.'}`);
}

// ---- start ---------------------------------------------------------------------------------------------

(async () => {
  if (await keys.needsKey()) {
    setStatus('This server needs a key.');
    keys.ask();
    return;
  }
  run();
})();
