// api.js — the one place that talks to the server: URLs, the key (Basic or access_key), JSON and errors.

const KEY_STORAGE = 'vsearch-key';

export class ApiError extends Error {
  constructor(message, status = 0, body = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

// ---- the key -------------------------------------------------------------------------------------

export function getKey() {
  try { return sessionStorage.getItem(KEY_STORAGE) || ''; } catch { return ''; }
}

export function setKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch { /* storage disabled: the key lives as long as nothing asks again */ }
}

let unauthorized = () => {};
/** Called on every 401 (the page reopens its key dialog). */
export function onUnauthorized(handler) { unauthorized = handler; }

function base64(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** KEY:SECRET travels as HTTP Basic; a bare app key as the access_key query parameter. */
function authHeaders() {
  const key = getKey();
  return key.includes(':') ? { Authorization: `Basic ${base64(key)}` } : {};
}

/** path?params: arrays become repeated keys, empty values are left out, the app key is added. */
export function apiUrl(path, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (v === null || v === undefined || v === '') continue;
      query.append(name, String(v));
    }
  }
  const key = getKey();
  if (key && !key.includes(':')) query.set('access_key', key);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** The message of an error body: ViSearch `error: ["…"]` or the collector's `error: {message}`. */
function errorMessage(body) {
  const error = body && body.error;
  if (Array.isArray(error)) return error.length ? String(error[0]) : '';
  if (error && typeof error === 'object') return error.message ? String(error.message) : '';
  return typeof error === 'string' ? error : '';
}

async function request(path, params, { method = 'GET', body, signal } = {}) {
  let response;
  try {
    response = await fetch(apiUrl(path, params), {
      method, body, signal,
      headers: { Accept: 'application/json', ...authHeaders() },
    });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError('The server cannot be reached.', 0);
  }
  let data = null;
  try { data = await response.json(); } catch (error) {
    if (error.name === 'AbortError') throw error;
  }
  if (response.status === 401) {
    unauthorized();
    throw new ApiError(errorMessage(data) || 'This server needs a valid key.', 401, data);
  }
  const failed = !response.ok || !data || (typeof data.status === 'string' && data.status.toLowerCase() === 'fail');
  if (failed) {
    throw new ApiError(errorMessage(data) || `The server answered ${response.status} ${response.statusText}`.trim(), response.status, data);
  }
  return data;
}

// ---- endpoints -----------------------------------------------------------------------------------

export const health = (signal) => request('/health', {}, { signal });

/** GET /catalog: declared fields and a page of image names. */
export const catalog = (params, signal) => request('/catalog', params, { signal });

/** GET /search (im_name), /colorsearch (color), /recommendations (im_name). */
export const search = (params, signal) => request('/search', params, { signal });
export const colorSearch = (params, signal) => request('/colorsearch', params, { signal });
export const recommendations = (params, signal) => request('/recommendations', params, { signal });

/** GET /uploadsearch with im_id or im_url. */
export const uploadSearchBy = (params, signal) => request('/uploadsearch', params, { signal });

/** POST /uploadsearch: the picture as the multipart part `image`, every parameter in the query string. */
export function uploadSearch(blob, params, signal) {
  const form = new FormData();
  form.append('image', blob, 'image.jpeg');
  return request('/uploadsearch', params, { method: 'POST', body: form, signal });
}

/** GET /discoversearch with im_id (a photo uploaded earlier): every detected object and its own results. */
export const discoverSearchBy = (params, signal) => request('/discoversearch', params, { signal });

/** POST /discoversearch: the picture as the multipart part `image`, like uploadSearch. */
export function discoverSearch(blob, params, signal) {
  const form = new FormData();
  form.append('image', blob, 'image.jpeg');
  return request('/discoversearch', params, { method: 'POST', body: form, signal });
}

export const stats = (params, signal) => request('/v3/stats', params, { signal });

/**
 * POST /v3/events with a JSON batch. With `beacon` (the page is going away) navigator.sendBeacon,
 * else a keepalive fetch. Resolves to whether the batch was handed over.
 */
export async function postEvents(json, { beacon = false } = {}) {
  if (beacon && navigator.sendBeacon) {
    if (navigator.sendBeacon('/v3/events', new Blob([json], { type: 'application/json' }))) return true;
  }
  try {
    const response = await fetch('/v3/events', {
      method: 'POST', body: json, keepalive: true,
      headers: { 'Content-Type': 'application/json' },
    });
    return response.ok;
  } catch {
    return false;
  }
}
