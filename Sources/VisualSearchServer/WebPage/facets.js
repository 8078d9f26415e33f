// facets.js — filters: facet checkboxes and ranges from a search's `facets`, the text search, active filter chips.
//
// ViSearch takes one `fq` value per field, so a string facet acts as a choice per field: ticking another value
// replaces the current one (said in the UI). Numbers filter with `fq=field:min,max`, text fields with words.

import { el } from './dom.js';
import { filterValue, splitFilter } from './state.js';
import { facetFields, fieldType, textFields } from './fields.js';

const ONE_VALUE = 'One value per field: ticking another value replaces the current one.';
const collapsed = new Set(); // facets the user closed, kept across searches

const numberText = (value) => {
  const n = Number(value);
  return Number.isFinite(n) ? String(n) : String(value ?? '');
};

function facetShell(field, type, children) {
  const details = el('details', { class: 'facet', dataset: { field, type }, open: !collapsed.has(field) },
    el('summary', { title: type === 'string' ? ONE_VALUE : null }, el('span', { class: 'facet-name', text: field })),
    ...children);
  details.addEventListener('toggle', () => {
    if (details.open) collapsed.delete(field); else collapsed.add(field);
  });
  return details;
}

function stringFacet(field, items, active, onFilter) {
  const list = items.map((i) => ({ value: String(i.value), count: i.count }));
  if (active !== null && !list.some((i) => i.value === active)) list.unshift({ value: active, count: undefined });
  if (!list.length) return null;
  // An identifier-like field (every value on one result: file names, colour codes) filters nothing useful.
  if (active === null && list.length >= 5 && list.every((i) => i.count === 1)) return null;
  const rows = list.map(({ value, count }) => {
    const box = el('input', { type: 'checkbox', name: `facet-${field}`, dataset: { value }, checked: value === active });
    box.addEventListener('change', () => onFilter(field, box.checked ? value : null));
    return el('label', { class: 'check facet-item' },
      box, el('span', { class: 'facet-value', text: value }),
      count === undefined ? null : el('span', { class: 'facet-count', text: String(count) }));
  });
  return facetShell(field, 'string', [el('div', { class: 'facet-items' }, rows)]);
}

function rangeFacet(field, type, range, active, onFilter) {
  if (!range && active === null) return null;
  if (active === null && range && numberText(range.min) === numberText(range.max)) return null; // one value: nothing to narrow
  const [activeMin = '', activeMax = ''] = active === null ? [] : active.split(',');
  const step = type === 'int' ? '1' : 'any';
  const lo = range ? numberText(range.min) : '';
  const hi = range ? numberText(range.max) : '';
  const min = el('input', { class: 'facet-min', type: 'number', step, inputmode: 'decimal', placeholder: lo || 'min', value: activeMin, 'aria-label': `${field} from` });
  const max = el('input', { class: 'facet-max', type: 'number', step, inputmode: 'decimal', placeholder: hi || 'max', value: activeMax, 'aria-label': `${field} to` });
  const form = el('form', { class: 'facet-range' },
    min, el('span', { class: 'range-dash', 'aria-hidden': 'true', text: '–' }), max,
    el('button', { class: 'facet-apply secondary', type: 'submit', text: 'Apply' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let a = min.value.trim() || lo;
    let b = max.value.trim() || hi;
    if (!min.value.trim() && !max.value.trim()) return onFilter(field, null);
    if (a !== '' && b !== '' && Number(a) > Number(b)) [a, b] = [b, a];
    onFilter(field, `${a},${b}`);
  });
  return facetShell(field, type, [form, range ? el('p', { class: 'hint', text: `${lo} – ${hi} in these results` }) : null]);
}

/**
 * Renders `facets` (a search response's) into #facets for the state's filters. onFilter(field, value|null).
 * facets === null: no search (catalog browser) — the panel explains instead.
 */
export function renderFacets(container, facets, state, onFilter) {
  const note = document.getElementById('facets-note');
  if (facets === null) {
    container.replaceChildren();
    note.textContent = 'Filters apply to searches: search by a photo, a URL, a colour or “Search similar” first.';
    return;
  }
  const byKey = new Map((Array.isArray(facets) ? facets : []).map((f) => [f.key, f]));
  const nodes = [];
  for (const field of facetFields()) {
    const facet = byKey.get(field) || {};
    const type = fieldType(field);
    const active = filterValue(state, field);
    const node = type === 'string'
      ? stringFacet(field, Array.isArray(facet.items) ? facet.items : [], active, onFilter)
      : rangeFacet(field, type, facet.range, active, onFilter);
    if (node) nodes.push(node);
  }
  container.replaceChildren(...nodes);
  note.textContent = nodes.length ? ONE_VALUE : 'No facets for these results.';
}

function chipLabel(field, value) {
  const type = fieldType(field);
  if ((type === 'int' || type === 'float') && value.includes(',')) return `${field}: ${value.replace(',', ' – ')}`;
  return `${field}: ${value}`;
}

/** #active-filters: one removable chip per fq. onFilter(field, null) removes. */
export function renderChips(container, state, onFilter) {
  const chips = state.fq.map((fq) => {
    const { field, value } = splitFilter(fq);
    const label = chipLabel(field, value);
    const remove = el('button', { type: 'button', class: 'chip-remove', 'aria-label': `Remove filter ${label}`, text: '✕' });
    remove.addEventListener('click', () => onFilter(field, null));
    return el('span', { class: 'chip', dataset: { field, value } }, el('span', { class: 'chip-label', text: label }), remove);
  });
  if (chips.length > 1) {
    const clear = el('button', { type: 'button', class: 'link-button', text: 'Clear all' });
    clear.addEventListener('click', () => onFilter(null, null));
    chips.push(clear);
  }
  container.replaceChildren(...chips);
  container.hidden = chips.length === 0;
}

/** The text search (#text-field, #text-query): Enter applies fq=field:words; empty words remove it. */
export function setupTextSearch(onFilter) {
  const form = document.getElementById('text-form');
  const select = document.getElementById('text-field');
  const input = document.getElementById('text-query');
  let state = null;
  const sync = () => { input.value = (state && filterValue(state, select.value)) || ''; };
  select.addEventListener('change', sync);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (select.value) onFilter(select.value, input.value.trim() || null);
  });
  return {
    /** Refresh the field list and the words for a state (searching=false: the catalog browser). */
    update(nextState, searching) {
      state = nextState;
      const names = textFields();
      form.hidden = names.length === 0 || !searching;
      const chosen = select.value;
      if ([...select.options].map((o) => o.value).join('\n') !== names.join('\n')) {
        select.replaceChildren(...names.map((n) => el('option', { value: n, text: n })));
      }
      const activeField = names.find((n) => filterValue(state, n) !== null);
      select.value = names.includes(chosen) && (!activeField || filterValue(state, chosen) !== null) ? chosen : (activeField || names[0] || '');
      sync();
    },
  };
}
