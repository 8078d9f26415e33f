// dom.js — building DOM safely: data only ever becomes text nodes or plain attributes, never HTML.

/**
 * el('button', {class: 'x', type: 'button', dataset: {imName: n}, text: 'label'}, child, …)
 * `text` sets textContent; other keys are attributes (null/false skip them, true sets an empty one).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The SVG twin of el(). */
export function svg(tag, props = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child) node.append(child);
  }
  return node;
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** Shows text in an element that is hidden while empty. */
export function setText(node, text) {
  node.textContent = text || '';
  node.hidden = !text;
}

/** The URL of a catalog image (the original, or the thumbnail of maximum dimension `size`). */
export function imageUrl(name, size) {
  const path = `/images/${encodeURIComponent(name)}`;
  return size ? `${path}?${new URLSearchParams({ size: String(size) })}` : path;
}

/** The same, absolute (what tracking events carry as imUrl). */
export function absoluteImageUrl(name, size) {
  return new URL(imageUrl(name, size), location.href).href;
}
