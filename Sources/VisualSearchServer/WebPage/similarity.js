// similarity.js — which similarity ranks the results: the switch (#similarity) and the labels that say which one
// answered a result list (the results' heading and the detail's "You may also like").

import { parseSimilarity } from './state.js';

/** Short words for a person (docs/web-page.md). */
export const SIMILARITY_LABELS = {
  visual: 'Looks like',
  color: 'Same colours',
  fused: 'Looks like + colours',
};

const TITLES = {
  visual: 'Ranked by what the pictures show (a learned image model)',
  color: 'Ranked by the colours and where they are',
  fused: 'Ranked by both: what the pictures show and their colours',
};

/**
 * Shows which similarity answered a list in a label element and its list's data-similarity:
 * '' (nothing answered yet, an error, a colour search) hides the label.
 */
export function showAnswered(label, list, answered) {
  const mode = parseSimilarity(answered);
  label.textContent = mode ? SIMILARITY_LABELS[mode] : '';
  label.title = mode ? TITLES[mode] : '';
  label.hidden = !mode;
  label.dataset.similarity = mode;
  if (list) list.dataset.similarity = mode;
}

/**
 * The switch: radio buttons in #similarity (a fieldset), one per similarity. onChoose(mode) when a person picks one.
 * show(state) before a search (hidden for colour searches, the requested one checked), answered(mode) once it
 * answered ('' when it failed: the switch stays usable and keeps what was asked).
 */
export function createSimilaritySwitch({ onChoose }) {
  const box = document.getElementById('similarity');
  const radios = [...box.querySelectorAll('input[type=radio][name=similarity]')];
  let requested = '';

  const check = (mode) => {
    for (const radio of radios) radio.checked = radio.value === mode;
  };

  for (const radio of radios) {
    radio.addEventListener('change', () => {
      if (radio.checked) onChoose(radio.value);
    });
  }

  return {
    show(state) {
      box.hidden = !state.q || state.q === 'color';
      requested = state.similarity;
      box.dataset.similarity = '';
      box.dataset.requested = requested;
      if (requested) check(requested);
    },
    answered(mode) {
      const answered = parseSimilarity(mode);
      box.dataset.similarity = answered;
      check(requested || answered);
    },
  };
}
