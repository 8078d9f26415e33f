// fields.js — the catalog's declared fields (GET /catalog) and which of them the result cards show (fl).

import { el } from './dom.js';

const STORAGE = 'vsearch-shown-fields';
export const MAX_SHOWN = 3;

let fields = []; // [{name, type}] with type string | text | int | float

/** Sets the field list; false when it is the same as before. */
export function setFields(list) {
  if (!Array.isArray(list)) return false;
  const next = list.filter((f) => f && typeof f.name === 'string');
  if (JSON.stringify(next) === JSON.stringify(fields)) return false;
  fields = next;
  return true;
}

export const getFields = () => fields;
export const fieldType = (name) => (fields.find((f) => f.name === name) || {}).type;
export const hasField = (name) => fields.some((f) => f.name === name);

/** Fields asked for as facets: strings and numbers. */
export const facetFields = () => fields.filter((f) => ['string', 'int', 'float'].includes(f.type)).map((f) => f.name);

/** Fields searched with words (fq=description:words). */
export const textFields = () => fields.filter((f) => f.type === 'text').map((f) => f.name);

export function shownFields() {
  let chosen = null;
  try { chosen = JSON.parse(localStorage.getItem(STORAGE) || 'null'); } catch { chosen = null; }
  if (!Array.isArray(chosen)) chosen = ['brand', 'price'];
  return chosen.filter(hasField).slice(0, MAX_SHOWN);
}

function setShownFields(list) {
  try { localStorage.setItem(STORAGE, JSON.stringify(list)); } catch { /* not kept */ }
}

/** `fl`: the shown fields, plus brand and description for the pictures' alt text. */
export function requestedFields() {
  const extra = ['brand', 'description'].filter(hasField);
  return [...new Set([...shownFields(), ...extra])];
}

/** The "Fields shown" chooser: up to MAX_SHOWN checkboxes; onChange() after a change. */
export function renderFieldChooser(container, onChange) {
  const chosen = shownFields();
  const chooser = container.closest('details');
  if (chooser) chooser.hidden = fields.length === 0;
  const boxes = fields.map((f) => el('input', {
    type: 'checkbox', value: f.name, checked: chosen.includes(f.name),
  }));
  const sync = () => {
    const count = boxes.filter((b) => b.checked).length;
    for (const b of boxes) b.disabled = !b.checked && count >= MAX_SHOWN;
  };
  for (const b of boxes) {
    b.addEventListener('change', () => {
      sync();
      setShownFields(boxes.filter((x) => x.checked).map((x) => x.value));
      onChange();
    });
  }
  sync();
  container.replaceChildren(
    el('p', { class: 'hint', text: `Up to ${MAX_SHOWN} fields on each result.` }),
    ...fields.map((f, i) => el('label', { class: 'check' }, boxes[i], el('span', { text: f.name }), el('span', { class: 'muted', text: f.type }))),
  );
}
