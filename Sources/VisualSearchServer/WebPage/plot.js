// plot.js — a small SVG line chart built with DOM APIs (no library): one polyline per series, axes, ticks.

import { svg } from './dom.js';

const MARGIN = { top: 12, right: 14, bottom: 28, left: 42 };

/** A round maximum for the y axis and its tick step (1, 2 or 5 × 10^n). */
function niceScale(max, ticks = 4) {
  if (max <= 0) return { max: 1, step: 1 };
  const raw = max / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const niceStep = Math.max(1, step);
  return { max: Math.ceil(max / niceStep) * niceStep, step: niceStep };
}

function timeFormatter(span) {
  const hour = 3600e3;
  if (span <= 36 * hour) return new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  if (span <= 400 * 24 * hour) return new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
  return new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short' });
}

const MINUTE = 60e3;
const STEPS = [1, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080, 20160, 43200, 131040, 525600].map((m) => m * MINUTE);

/** Round times (whole minutes, hours, local midnights…) between x0 and x1, at most `most` of them. */
function timeTicks(x0, x1, most) {
  const step = STEPS.find((s) => (x1 - x0) / s <= most) || (x1 - x0) / most;
  const offset = new Date(x0).getTimezoneOffset() * MINUTE; // align to the local clock
  const ticks = [];
  for (let t = Math.ceil((x0 - offset) / step) * step + offset; t <= x1; t += step) ticks.push(t);
  return ticks;
}

/**
 * Draws into `root` (an <svg>): series = [{name, className, points: [{t, v}]}] over [x0, x1] (ms).
 * The view box follows the element's width so that text keeps its size.
 */
export function lineChart(root, { series, x0, x1, emptyText = 'No events' }) {
  const width = Math.max(280, Math.round(root.clientWidth || 720));
  const height = width < 500 ? 200 : 240;
  root.setAttribute('viewBox', `0 0 ${width} ${height}`);
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const maxValue = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.v)));
  const { max: yMax, step } = niceScale(maxValue);
  const span = Math.max(1, x1 - x0);
  const x = (t) => MARGIN.left + ((t - x0) / span) * plotW;
  const y = (v) => MARGIN.top + plotH - (v / yMax) * plotH;
  const nodes = [];

  // y axis: grid lines and counts
  const yAxis = svg('g', { class: 'axis axis-y' });
  for (let v = 0; v <= yMax; v += step) {
    nodes.push(svg('line', { class: 'grid-line', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(v), y2: y(v) }));
    yAxis.append(svg('text', { x: MARGIN.left - 6, y: y(v) + 4, 'text-anchor': 'end', text: String(v) }));
  }
  yAxis.append(svg('line', { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotH }));

  // x axis: time ticks
  const xAxis = svg('g', { class: 'axis axis-x' });
  xAxis.append(svg('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: MARGIN.top + plotH, y2: MARGIN.top + plotH }));
  const format = timeFormatter(span);
  for (const t of timeTicks(x0, x1, Math.max(3, Math.floor(plotW / 90)))) {
    const px = x(t);
    xAxis.append(svg('line', { x1: px, x2: px, y1: MARGIN.top + plotH, y2: MARGIN.top + plotH + 4 }));
    const anchor = px - MARGIN.left < 30 ? 'start' : width - MARGIN.right - px < 30 ? 'end' : 'middle';
    xAxis.append(svg('text', { x: px, y: height - 8, 'text-anchor': anchor, text: format.format(new Date(t)) }));
  }
  nodes.push(yAxis, xAxis);

  // the series
  const pointFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  for (const s of series) {
    const group = svg('g', { class: `series-group ${s.className}`, 'data-series': s.name });
    const points = s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
    group.append(svg('polyline', { class: `series ${s.className}`, points }));
    if (s.points.length <= 80) {
      for (const p of s.points) {
        if (!p.v) continue;
        group.append(svg('circle', { class: `series-dot ${s.className}`, cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r: 3 },
          svg('title', { text: `${s.name}: ${p.v} (${pointFormat.format(new Date(p.t))})` })));
      }
    }
    nodes.push(group);
  }
  if (maxValue === 0) {
    nodes.push(svg('text', { class: 'empty-text', x: MARGIN.left + plotW / 2, y: MARGIN.top + plotH / 2, 'text-anchor': 'middle', text: emptyText }));
  }
  root.replaceChildren(...nodes);
}
