// query.js — where a query comes from: file picker, drag and drop, paste, image URL, colour; and the upload resize.

export const MAX_SIDE = 512; // the SDKs' default upload size (longer side)
export const QUALITY = 0.97; // and JPEG quality

async function decode(file) {
  try {
    return await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return createImageBitmap(file); // an older browser without the option: its default applies EXIF too
  }
}

/**
 * Resize a picture as the SDKs do before uploading: EXIF orientation applied, longer side at most 512 px
 * (never enlarged), always re-encoded as JPEG 0.97. Resolves to {blob, width, height}.
 */
export async function resizeForUpload(file) {
  let bitmap;
  try {
    bitmap = await decode(file);
  } catch {
    throw new Error('This file is not a picture the browser can read.');
  }
  const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
  const width = Math.max(1, Math.round(bitmap.width * scale));
  const height = Math.max(1, Math.round(bitmap.height * scale));
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff'; // JPEG has no transparency
  context.fillRect(0, 0, width, height);
  context.imageSmoothingQuality = 'high';
  context.drawImage(bitmap, 0, 0, width, height);
  bitmap.close();
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', QUALITY));
  if (!blob) throw new Error('The picture could not be prepared for upload.');
  return { blob, width, height };
}

const isImageFile = (file) => file && (file.type.startsWith('image/') || file.type === '');

function firstImage(files) {
  return [...(files || [])].find(isImageFile) || null;
}

function looksLikeUrl(text) {
  try {
    const url = new URL(text.trim());
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isTextEntry(node) {
  return node instanceof HTMLElement &&
    (node.isContentEditable || (node.matches('input, textarea, select') && !node.matches('[type=file], [type=color], [type=checkbox], [type=button], [type=submit]')));
}

/**
 * Wires the query inputs. Handlers: onFile(File), onUrl(string), onColor('rrggbb'), onError(message).
 */
export function setupQueryInputs({ onFile, onUrl, onColor, onError }) {
  const upload = document.getElementById('upload-input');
  const dropzone = document.getElementById('dropzone');
  const urlForm = document.getElementById('url-form');
  const urlInput = document.getElementById('url-input');
  const colorForm = document.getElementById('color-form');
  const colorInput = document.getElementById('color-input');

  upload.addEventListener('change', () => {
    const file = firstImage(upload.files);
    if (file) onFile(file);
    upload.value = ''; // choosing the same file again still searches
  });

  // Drag and drop anywhere on the page lands in the drop zone.
  let depth = 0;
  const setDragging = (on) => dropzone.classList.toggle('dragging', on);
  document.addEventListener('dragenter', (event) => {
    if (![...event.dataTransfer.types].some((t) => t === 'Files' || t === 'text/uri-list')) return;
    depth += 1;
    setDragging(true);
  });
  document.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) setDragging(false);
  });
  document.addEventListener('dragover', (event) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  });
  document.addEventListener('drop', (event) => {
    event.preventDefault();
    depth = 0;
    setDragging(false);
    const file = firstImage(event.dataTransfer.files);
    if (file) return onFile(file);
    const url = (event.dataTransfer.getData('text/uri-list') || event.dataTransfer.getData('text/plain') || '').split('\n')[0];
    if (looksLikeUrl(url)) return onUrl(url.trim());
    if (event.dataTransfer.files.length) onError('Drop a picture (JPEG, PNG, WebP…).');
  });

  // Paste a picture (or an image URL) while focus is not in a text field, e.g. on the drop zone.
  document.addEventListener('paste', (event) => {
    const data = event.clipboardData;
    if (!data) return;
    const file = firstImage(data.files) ||
      [...data.items].filter((i) => i.kind === 'file' && i.type.startsWith('image/')).map((i) => i.getAsFile())[0];
    if (file) {
      event.preventDefault();
      onFile(file);
      return;
    }
    if (isTextEntry(event.target)) return;
    const text = data.getData('text/plain');
    if (looksLikeUrl(text)) {
      event.preventDefault();
      urlInput.value = text.trim();
      onUrl(text.trim());
    }
  });
  dropzone.addEventListener('keydown', (event) => {
    if (event.target === dropzone && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      upload.click();
    }
  });

  urlForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = urlInput.value.trim();
    if (url) onUrl(url);
  });

  colorForm.addEventListener('submit', (event) => {
    event.preventDefault();
    onColor(colorInput.value.replace('#', '').toLowerCase());
  });
}

/** Reflects the current query in the inputs (after back/forward or reload). */
export function showQueryInInputs(state) {
  if (state.q === 'url') document.getElementById('url-input').value = state.imUrl;
  if (state.q === 'color') document.getElementById('color-input').value = `#${state.color}`;
}
