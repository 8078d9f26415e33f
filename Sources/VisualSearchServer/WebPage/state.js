// state.js — the page state and its URL (docs/web-page.md "The page's URL"): parse, serialise, change.

export const PAGE_SIZE = 24;

/** The similarities a person can ask for (`similarity=` on the API and in the page's URL). */
export const SIMILARITIES = ['visual', 'color', 'fused'];

/** `visual|color|fused` (`colour` read as `color`), or '' for anything else: the server's default. */
export function parseSimilarity(text) {
  const value = String(text || '').toLowerCase();
  const mode = value === 'colour' ? 'color' : value;
  return SIMILARITIES.includes(mode) ? mode : '';
}

/**
 * q: null (catalog browser) | 'similar' | 'upload' | 'url' | 'color'
 * box: [x1, y1, x2, y2] in the query image's pixels, or null (the whole picture)
 * fq: ['field:value', …] (one per field)
 * similarity: '' (the server's default) | 'visual' | 'color' | 'fused' — what ranks image queries and the detail's
 *   recommendations; a colour search is always by colour and its URL does not carry it
 * view: '' (the results) | 'objects' (an uploaded photo's "Find every product" view: each detected object's results)
 */
export function emptyState() {
  return { q: null, imName: '', imId: '', imUrl: '', color: '', box: null, fq: [], page: 1, similarity: '', view: '' };
}

export function parseBox(text) {
  if (!text) return null;
  const parts = text.split(',').map((v) => Number(v.trim()));
  if (parts.length !== 4 || parts.some((v) => !Number.isFinite(v) || v < 0)) return null;
  const [a, b, c, d] = parts.map(Math.round);
  return [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];
}

export function parseState(search) {
  const params = new URLSearchParams(search);
  const state = emptyState();
  const q = params.get('q');
  const imName = params.get('im_name') || '';
  const imId = params.get('im_id') || '';
  const imUrl = params.get('im_url') || '';
  const color = (params.get('color') || '').replace(/^#/, '');
  if (q === 'similar' && imName) Object.assign(state, { q, imName });
  else if (q === 'upload' && imId) Object.assign(state, { q, imId });
  else if (q === 'url' && imUrl) Object.assign(state, { q, imUrl });
  else if (q === 'color' && /^[0-9a-f]{6}$/i.test(color)) Object.assign(state, { q, color: color.toLowerCase() });
  if (state.q && state.q !== 'color') state.box = parseBox(params.get('box'));
  state.fq = normaliseFilters(params.getAll('fq'));
  state.similarity = parseSimilarity(params.get('similarity'));
  if (state.q === 'upload' && params.get('view') === 'objects') state.view = 'objects';
  const page = Number.parseInt(params.get('page') || '1', 10);
  state.page = Number.isFinite(page) && page >= 1 ? page : 1;
  return state;
}

/** '?q=…' (or '' for the first catalog page), in a stable order. */
export function toSearch(state) {
  const params = new URLSearchParams();
  if (state.q) params.set('q', state.q);
  if (state.q === 'similar') params.set('im_name', state.imName);
  if (state.q === 'upload' && state.imId) params.set('im_id', state.imId);
  if (state.q === 'url') params.set('im_url', state.imUrl);
  if (state.q === 'color') params.set('color', state.color);
  if (state.box) params.set('box', state.box.join(','));
  for (const f of state.fq) params.append('fq', f);
  if (state.similarity && state.q && state.q !== 'color') params.set('similarity', state.similarity);
  if (state.view === 'objects' && state.q === 'upload') params.set('view', 'objects');
  if (state.page > 1) params.set('page', String(state.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function splitFilter(fq) {
  const i = fq.indexOf(':');
  return { field: fq.slice(0, i), value: fq.slice(i + 1) };
}

/** One filter per field (the last wins, as ViSearch keeps one value per field), none empty. */
function normaliseFilters(list) {
  const byField = new Map();
  for (const fq of list) {
    const { field, value } = splitFilter(fq);
    if (fq.indexOf(':') > 0 && value.trim()) byField.set(field, `${field}:${value}`);
  }
  return [...byField.values()];
}

export function filterValue(state, field) {
  const found = state.fq.find((f) => splitFilter(f).field === field);
  return found === undefined ? null : splitFilter(found).value;
}

/** The state with `field` filtered by `value` (replacing its previous value), or unfiltered when value is empty. */
export function withFilter(state, field, value) {
  const fq = state.fq.filter((f) => splitFilter(f).field !== field);
  if (value !== null && value !== undefined && String(value).trim() !== '') fq.push(`${field}:${value}`);
  return { ...state, fq, page: 1 };
}

/** A new query keeps the filters and the similarity chosen, and starts on page 1 with no box. */
export function withQuery(state, query) {
  return { ...emptyState(), fq: state.fq, similarity: state.similarity, ...query };
}
