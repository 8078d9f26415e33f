// box.js — the selection box editor over #query-image: draw, move and resize it with a pointer or the keyboard.
//
// Coordinates are the query image's own pixels (naturalWidth × naturalHeight), ViSearch `box=x1,y1,x2,y2`;
// a click without a drag is a point (x1 = x2, y1 = y2); no box (null) means the whole picture.

const DRAG_THRESHOLD = 4; // CSS pixels a pointer must travel before a click becomes a drag

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

/**
 * frame: the element wrapping the picture (it receives pointer events); image: the <img>; box: #box.
 * onChange(box): the box on screen changed (not yet searched); onCommit(box): search with it.
 * onTap(target): a click without a drag that did not start on the box; true when it was handled (a detected object
 * clicked), else the click becomes a point as usual.
 */
export function createBoxEditor({ frame, image, box, onChange, onCommit, onTap = () => false }) {
  let size = null; // {w, h}: the picture's pixels, once known
  let rect = null; // [x1, y1, x2, y2] or null for the whole picture
  let drag = null;

  const current = () => rect || [0, 0, size.w, size.h];
  const isPoint = (r) => r && r[0] === r[2] && r[1] === r[3];

  function render() {
    if (!size) {
      box.hidden = true;
      onChange(rect);
      return;
    }
    box.hidden = false;
    const [x1, y1, x2, y2] = current();
    const pct = (v, total) => ((v / total) * 100).toFixed(3);
    box.style.setProperty('--x1', pct(x1, size.w));
    box.style.setProperty('--y1', pct(y1, size.h));
    box.style.setProperty('--x2', pct(x2, size.w));
    box.style.setProperty('--y2', pct(y2, size.h));
    box.dataset.kind = !rect ? 'whole' : isPoint(rect) ? 'point' : 'box';
    box.setAttribute('aria-label', rect
      ? `Selection ${isPoint(rect) ? `point ${x1},${y1}` : `box ${x1},${y1} to ${x2},${y2}`} of a ${size.w}×${size.h} picture`
      : `Selection: the whole ${size.w}×${size.h} picture`);
    onChange(rect);
  }

  /** A pointer position in picture pixels (unrounded, clamped to the picture). */
  function toPicture(event) {
    const r = image.getBoundingClientRect();
    return [
      clamp(((event.clientX - r.left) / r.width) * size.w, 0, size.w),
      clamp(((event.clientY - r.top) / r.height) * size.h, 0, size.h),
    ];
  }

  const spanning = ([ax, ay], [bx, by]) => [
    Math.round(Math.min(ax, bx)), Math.round(Math.min(ay, by)),
    Math.round(Math.max(ax, bx)), Math.round(Math.max(ay, by)),
  ];

  frame.addEventListener('pointerdown', (event) => {
    if (!size || (event.pointerType === 'mouse' && event.button !== 0)) return;
    const handle = event.target.closest('.handle');
    const onBox = event.target.closest('#box');
    const point = toPicture(event);
    const [x1, y1, x2, y2] = current();
    let mode = 'draw';
    let anchor = point;
    if (rect && handle) {
      mode = 'resize';
      const corner = handle.dataset.handle;
      anchor = [corner.includes('w') ? x2 : x1, corner.includes('n') ? y2 : y1];
    } else if (rect && onBox) {
      mode = 'move';
    }
    drag = { mode, anchor, origin: point, start: rect, target: event.target, clientX: event.clientX, clientY: event.clientY, moved: false };
    frame.setPointerCapture(event.pointerId);
    box.focus({ preventScroll: true });
    event.preventDefault();
  });

  frame.addEventListener('pointermove', (event) => {
    if (!drag) return;
    if (!drag.moved && Math.hypot(event.clientX - drag.clientX, event.clientY - drag.clientY) < DRAG_THRESHOLD) return;
    drag.moved = true;
    const point = toPicture(event);
    if (drag.mode === 'move') {
      const [x1, y1, x2, y2] = drag.start;
      const dx = Math.round(clamp(point[0] - drag.origin[0], -x1, size.w - x2));
      const dy = Math.round(clamp(point[1] - drag.origin[1], -y1, size.h - y2));
      rect = [x1 + dx, y1 + dy, x2 + dx, y2 + dy];
    } else {
      rect = spanning(drag.anchor, point);
    }
    render();
  });

  const finish = (event) => {
    if (!drag) return;
    const { moved, origin, mode, target } = drag;
    drag = null;
    if (frame.hasPointerCapture(event.pointerId)) frame.releasePointerCapture(event.pointerId);
    if (!moved) {
      if (mode === 'resize') return; // a tap on a handle changes nothing
      if (mode === 'draw' && onTap(target)) return; // e.g. a detected object: it searches its own box
      rect = spanning(origin, origin); // a click: a point
      render();
    }
    onCommit(rect);
  };
  frame.addEventListener('pointerup', finish);
  frame.addEventListener('pointercancel', () => {
    if (!drag) return;
    rect = drag.start;
    drag = null;
    render();
  });

  const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  box.addEventListener('keydown', (event) => {
    if (!size) return;
    if (event.key === 'Enter') {
      event.preventDefault();
      onCommit(rect);
      return;
    }
    if (event.key === 'Delete' || event.key === 'Backspace') {
      event.preventDefault();
      rect = null;
      render();
      return;
    }
    const direction = ARROWS[event.key];
    if (!direction || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const step = event.altKey ? 1 : Math.max(1, Math.round(Math.max(size.w, size.h) / 50));
    let [x1, y1, x2, y2] = current();
    if (event.shiftKey) { // resize: the bottom-right corner moves
      x2 = clamp(x2 + direction[0] * step, x1, size.w);
      y2 = clamp(y2 + direction[1] * step, y1, size.h);
    } else { // move the whole box, kept inside the picture
      const dx = clamp(direction[0] * step, -x1, size.w - x2);
      const dy = clamp(direction[1] * step, -y1, size.h - y2);
      x1 += dx; x2 += dx; y1 += dy; y2 += dy;
    }
    rect = [x1, y1, x2, y2];
    render();
  });

  return {
    /** The picture's pixel size (null when there is no picture). */
    setSize(width, height) {
      size = width > 0 && height > 0 ? { w: width, h: height } : null;
      if (size && rect) rect = [clamp(rect[0], 0, size.w), clamp(rect[1], 0, size.h), clamp(rect[2], 0, size.w), clamp(rect[3], 0, size.h)];
      render();
    },
    setBox(value) {
      rect = value ? [...value] : null;
      drag = null;
      if (size && rect) rect = [clamp(rect[0], 0, size.w), clamp(rect[1], 0, size.h), clamp(rect[2], 0, size.w), clamp(rect[3], 0, size.h)];
      render();
    },
    getBox: () => (rect ? [...rect] : null),
  };
}
