#!/usr/bin/env python3
"""Browser tests of the web page of `vsearch serve`, run in Debian's headless Chromium through Selenium.

The contract is docs/web-page.md: routes, URL state and the element ids and data attributes under "Hooks for
tests". Each check is a named step done as a person would — real clicks, a file chosen in the file input, a box
dragged with the mouse, keys pressed — that waits on conditions (never fixed sleeps), saves a screenshot
NN-name.png and passes or fails with a message saying what was expected and what was seen.

    python3 Tests/Browser/page_test.py --vsearch .build/release/vsearch --corpus corpus \
        --screenshots test-output/browser --json test-output/browser/result.json [--only upload,box] [--web-root DIR]

Exit status: 0 when every step passed, 1 when one failed, 2 when the run could not start. The JSON file is
{"passed": bool, "steps": [{"name", "passed", "message", "screenshot", "seconds"}], "console": [...], ...}.
Servers and the browser are stopped at the end whatever happens.
"""

import argparse
import csv
import json
import os
import re
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import traceback
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (TIMEOUT, WINDOW, Browser, Failure, Server, check, http, index, jpeg_size,  # noqa: E402
                     query_of, run, wait_for, wait_until)

import selenium  # noqa: E402
from selenium.common.exceptions import (ElementClickInterceptedException, ElementNotInteractableException,  # noqa: E402
                                        WebDriverException)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

PAGE_LIMIT = 24
CSP = {  # docs/web-page.md
    "default-src": "'self'", "img-src": "'self' data: blob:", "style-src": "'self'", "script-src": "'self'",
    "object-src": "'none'", "base-uri": "'none'", "frame-ancestors": "'none'", "form-action": "'self'",
}

# ------------------------------------------------------------------------------------------------ page probes

RESULTS_JS = """
const r = document.querySelector('#results');
if (!r) return null;
const items = [...r.querySelectorAll('.result[data-im-name]')];
const loaded = e => { const i = e.querySelector('img.result-image'); return !!i && i.complete && i.naturalWidth > 0; };
const error = document.querySelector('#error');
return {state: r.dataset.state || '', reqid: r.dataset.reqid || '', total: r.dataset.total || '',
        names: items.map(e => e.dataset.imName), loaded: items.filter(loaded).length,
        error: error && !error.hidden ? error.textContent.trim() : '', url: location.href};
"""

DETAIL_JS = """
const dialog = document.querySelector('#detail');
if (!dialog) return null;
const recs = document.querySelector('#detail-recommendations');
const items = recs ? [...recs.querySelectorAll('.result')] : [];
const image = document.querySelector('#detail-image');
const loaded = i => !!i && i.complete && i.naturalWidth > 0;
return {open: dialog.tagName === 'DIALOG' ? dialog.open : dialog.offsetParent !== null,
        name: (document.querySelector('#detail-name') || {}).textContent || '',
        image: loaded(image),
        rows: [...document.querySelectorAll('#detail-metadata tr[data-field]')].map(r => [r.dataset.field, r.textContent]),
        recState: recs ? (recs.dataset.state || '') : null,
        recs: items.map(e => e.dataset.imName || ''),
        recLoaded: items.filter(e => loaded(e.querySelector('img'))).length};
"""

FIND_RESULT_JS = """
return [...document.querySelectorAll(arguments[1] + ' .result[data-im-name]')].find(e => e.dataset.imName === arguments[0]) || null;
"""

ACTIVE_JS = """
const a = document.activeElement;
if (!a || a === document.body) return {id: '', tag: 'BODY', result: null};
const r = a.closest('.result[data-im-name]');
return {id: a.id || '', tag: a.tagName, cls: a.className && a.className.baseVal === undefined ? a.className : '',
        result: r && r.closest('#results') ? r.dataset.imName : null};
"""

OVERFLOW_JS = """
const width = window.innerWidth;
const wide = [];
for (const e of document.querySelectorAll('body *')) {
  const r = e.getBoundingClientRect();
  if (r.width > 0 && r.height > 0 && r.right > width + 1 && getComputedStyle(e).visibility !== 'hidden')
    wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ').join('.') : '') + ' right=' + Math.round(r.right));
}
const dialog = document.querySelector('dialog[open]');
return {inner: width, scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth,
        dialog: dialog ? {id: dialog.id, scroll: dialog.scrollWidth, client: dialog.clientWidth,
                          right: Math.round(dialog.getBoundingClientRect().right)} : null,
        wide: wide.slice(0, 6)};
"""

SIMILARITY_JS = """
const box = document.querySelector('#similarity');
const label = document.querySelector('#similarity-label');
const checked = box ? box.querySelector('input[type=radio][name=similarity]:checked') : null;
const grid = document.querySelector('#results');
return {shown: !!box && !box.hidden && box.getClientRects().length > 0, answered: box ? box.dataset.similarity || '' : null,
        checked: checked ? checked.value : '', label: label && !label.hidden ? label.textContent.trim() : '',
        grid: grid ? grid.dataset.similarity || '' : null};
"""

# The API requests the page made (Resource Timing keeps every fetch with its URL) whose path is arguments[0].
REQUESTS_JS = """
return performance.getEntriesByType('resource').map(e => e.name)
  .filter(n => { try { return new URL(n).pathname === arguments[0]; } catch { return false; } });
"""

INJECTION_JS = """
const found = [];
for (const e of document.querySelectorAll('*')) {
  for (const a of e.attributes) {
    if (/^on/i.test(a.name)) found.push(e.tagName + '[' + a.name + ']');
    if (/^(href|src|action|formaction|xlink:href)$/i.test(a.name) && /^\\s*javascript:/i.test(a.value)) found.push(e.tagName + '[' + a.name + '=javascript:]');
  }
  if (e.tagName === 'SCRIPT' && !e.src) found.push('inline SCRIPT');
  if (e.tagName === 'IMG' && e.getAttribute('src') === 'x') found.push('IMG[src=x]');
  if (e.tagName === 'B' && e.textContent === 'bold') found.push('B from metadata');
}
return {xss: typeof window.__xss === 'undefined' ? null : String(window.__xss), csp: window.__csp || [], injected: found,
        text: document.body.innerText};
"""


# The detected objects on the query picture (#objects-layer) and where each is drawn on screen.
OBJECTS_JS = """
const layer = document.querySelector('#objects-layer');
if (!layer) return null;
const note = document.querySelector('#objects-note');
const toggle = document.querySelector('#objects-toggle');
const error = document.querySelector('#error');
return {state: layer.dataset.state || '', count: layer.dataset.count || '', hidden: layer.hidden,
        note: note && !note.hidden ? note.textContent.trim() : '',
        toggle: toggle && !toggle.hidden && toggle.getClientRects().length > 0 ? toggle.textContent.trim() : null,
        error: error && !error.hidden ? error.textContent.trim() : '',
        boxes: [...layer.querySelectorAll('.object-box')].map(b => {
          const r = b.getBoundingClientRect();
          const visible = r.width > 0 && r.height > 0 && getComputedStyle(b).visibility !== 'hidden';
          return {type: b.dataset.type || '', score: b.dataset.score || '', box: (b.dataset.box || '').split(',').map(Number),
                  label: (b.querySelector('.object-label') || {}).textContent || '', pressed: b.getAttribute('aria-pressed'),
                  name: b.getAttribute('aria-label') || '', tag: b.tagName, tabindex: b.tabIndex, visible,
                  rect: {x: r.left, y: r.top, w: r.width, h: r.height}};
        })};
"""

# The "Find every product" view: its rows, each with its object and its result cards.
OBJECT_ROWS_JS = """
const section = document.querySelector('#objects');
if (!section) return null;
const loaded = i => !!i && i.complete && i.naturalWidth > 0;
const visible = e => !!e && !e.hidden && e.getClientRects().length > 0;
return {shown: visible(section), state: section.dataset.state || '', reqid: section.dataset.reqid || '',
        resultsShown: visible(document.querySelector('#results')),
        rows: [...section.querySelectorAll('.object-row')].map(r => ({
          type: r.dataset.type || '', score: r.dataset.score || '', box: (r.dataset.box || '').split(',').map(Number),
          title: (r.querySelector('.object-title') || {}).textContent || '',
          crop: (() => { const c = r.querySelector('canvas.object-crop'); return c ? [c.width, c.height] : null; })(),
          names: [...r.querySelectorAll('.object-results .result[data-im-name]')].map(e => e.dataset.imName),
          loaded: [...r.querySelectorAll('.object-results img.result-image')].filter(loaded).length}))};
"""

# A scene for the detector, made in the page's own browser from catalog pictures (Tux Paint stamps on white: the
# detector's plain-background case), pasted on a white canvas at fixed places; resolves to a PNG data URL.
SCENE_JS = """
const [names, done] = [arguments[0], arguments[arguments.length - 1]];
const canvas = document.createElement('canvas');
canvas.width = 900; canvas.height = 600;
const context = canvas.getContext('2d');
context.fillStyle = '#fff';
context.fillRect(0, 0, canvas.width, canvas.height);
const places = [[40, 80, 240], [340, 340, 240], [680, 60, 260]]; // left, top, longer side
Promise.all(names.map(n => new Promise((resolve, reject) => {
  const image = new Image();
  image.onload = () => resolve(image);
  image.onerror = () => reject(new Error('cannot load ' + n));
  image.src = '/images/' + encodeURIComponent(n);
}))).then(images => {
  images.forEach((image, i) => {
    const [x, y, side] = places[i];
    const scale = side / Math.max(image.naturalWidth, image.naturalHeight);
    context.imageSmoothingQuality = 'high';
    context.drawImage(image, x, y, Math.round(image.naturalWidth * scale), Math.round(image.naturalHeight * scale));
  });
  done(canvas.toDataURL('image/png'));
}, error => done('error: ' + error.message));
"""

SCENE_STAMPS = ["tp_clothes_hats_blue_fedora", "tp_food_fruit_cartoon_banana", "tp_hobbies_music_string_guitar2"]


def results(driver):
    return driver.execute_script(RESULTS_JS)


def objects_on_picture(driver):
    return driver.execute_script(OBJECTS_JS)


def object_rows(driver):
    return driver.execute_script(OBJECT_ROWS_JS)


def describe(snapshot):
    if not snapshot:
        return "no #results"
    return (f"state={snapshot['state']} reqid={snapshot['reqid']!r} results={len(snapshot['names'])} "
            f"loaded={snapshot['loaded']} error={snapshot['error']!r} names={snapshot['names'][:6]} url={snapshot['url']}")


def is_new(now, before):
    if before is None:
        return True
    if now["reqid"] or before["reqid"]:
        return now["reqid"] != before["reqid"]
    return now["names"] != before["names"] or now["url"] != before["url"]


def wait_results(driver, before=None, min_loaded=0, timeout=TIMEOUT, what="results"):
    """Waits for #results[data-state=ready] of a search other than `before` with at least min_loaded pictures
    loaded (complete, naturalWidth > 0); fails at once when the page shows an error for it."""
    started = time.monotonic()

    def ready(d):
        now = results(d)
        if now is None and time.monotonic() - started > 10 and d.execute_script("return document.readyState") == "complete":
            raise Failure(f"{what}: no #results on the page at {d.current_url} (title {d.title!r})")
        if not now or not is_new(now, before):
            return False
        if now["state"] == "error":
            raise Failure(f"{what}: #results[data-state=error], #error says {now['error']!r} (url {now['url']})")
        if now["state"] != "ready":
            return False
        return now if now["loaded"] >= min(min_loaded, max(len(now["names"]), 1)) else False
    return wait_for(driver, f"{what}: #results[data-state=ready]" + (f" with {min_loaded} pictures loaded" if min_loaded else ""),
                    ready, timeout, last=lambda d: describe(results(d)))


def detail(driver):
    return driver.execute_script(DETAIL_JS)


def similarity(driver):
    return driver.execute_script(SIMILARITY_JS)


def show_results_from_query(driver):
    """Scrolls the query view to the top and waits for the result pictures on screen (a screenshot's view)."""
    driver.execute_script("document.querySelector('#query-view').scrollIntoView({block: 'start'})")
    wait_for(driver, "the result pictures on screen to load", lambda d: d.execute_script("""
        return [...document.querySelectorAll('#results img.result-image')].filter(i => {
          const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })
          .every(i => i.complete && i.naturalWidth > 0);"""))


def requests_to(driver, path):
    """The URLs of the page's requests to path since the last performance.clearResourceTimings()."""
    return driver.execute_script(REQUESTS_JS, path)


def find_result(driver, name, scope="#results"):
    element = driver.execute_script(FIND_RESULT_JS, name, scope)
    check(element is not None, f"no .result[data-im-name={name!r}] in {scope}")
    return element


def click_result(driver, name, scope="#results"):
    """Clicks a result's picture, as a person does."""
    element = find_result(driver, name, scope)
    target = element.find_elements(By.CSS_SELECTOR, "img.result-image") or [element]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", target[0])
    target[0].click()


def click(driver, element):
    """A real click; when a styled control hides the input, its label is what a person clicks."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    try:
        element.click()
    except (ElementNotInteractableException, ElementClickInterceptedException):
        label = driver.execute_script(
            "const e = arguments[0]; return e.closest('label') || (e.id && document.querySelector('label[for=\"' + e.id + '\"]'));",
            element)
        check(label is not None, "the control cannot be clicked and has no label")
        label.click()


def facet_checkbox(driver, field, value):
    """The checkbox of a string facet's value, or None."""
    return driver.execute_script("""
        const f = [...document.querySelectorAll('#facets .facet[data-field]')].find(f => f.dataset.field === arguments[0]);
        return f ? [...f.querySelectorAll('input[type=checkbox][data-value]')].find(i => i.dataset.value === arguments[1]) || null : null;
    """, field, value)


def by_id(driver, element_id):
    elements = driver.find_elements(By.ID, element_id)
    check(elements, f"no #{element_id} on the page ({driver.current_url})")
    return elements[0]


def params(url):
    return query_of(url)


def one(url, name):
    values = params(url).get(name, [])
    return values[0] if values else None


def parse_box(url):
    value = one(url, "box")
    check(value is not None, f"the URL has no box=: {url}")
    parts = value.split(",")
    check(len(parts) == 4, f"box={value!r} is not x1,y1,x2,y2")
    try:
        return [float(p) for p in parts]
    except ValueError:
        raise Failure(f"box={value!r} is not numbers") from None


def press(driver, key, times=1, modifier=None):
    chain = ActionChains(driver)
    if modifier:
        chain.key_down(modifier)
    for _ in range(times):
        chain.send_keys(key)
    if modifier:
        chain.key_up(modifier)
    chain.perform()


def tab_until(driver, predicate, limit=250):
    """Presses Tab from the top of the page until predicate(activeElement info) holds; returns (info, presses)."""
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    seen = []
    for presses in range(1, limit + 1):
        press(driver, Keys.TAB)
        info = driver.execute_script(ACTIVE_JS)
        seen.append(f"{info['tag'].lower()}#{info['id']}" if info["id"] else info["tag"].lower())
        if predicate(info):
            return info, presses
    raise Failure(f"{limit} Tab presses never reached it; focus went {' → '.join(seen[:40])} …")


def query_image_rect(driver):
    """The query picture's drawn area on screen (object-fit aware), and its natural size."""
    return driver.execute_script("""
        const img = document.querySelector('#query-image');
        if (!img || !img.complete || !img.naturalWidth) return null;
        const r = img.getBoundingClientRect(), cs = getComputedStyle(img);
        const px = v => parseFloat(v) || 0;
        let x = r.left + px(cs.borderLeftWidth) + px(cs.paddingLeft), y = r.top + px(cs.borderTopWidth) + px(cs.paddingTop);
        let w = img.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight), h = img.clientHeight - px(cs.paddingTop) - px(cs.paddingBottom);
        const nw = img.naturalWidth, nh = img.naturalHeight;
        if (cs.objectFit === 'contain' || cs.objectFit === 'scale-down') {
          const s = Math.min(w / nw, h / nh, cs.objectFit === 'scale-down' ? 1 : Infinity);
          x += (w - nw * s) / 2; y += (h - nh * s) / 2; w = nw * s; h = nh * s;
        }
        return {x, y, w, h, nw, nh, left: r.left, top: r.top, width: r.width, height: r.height};
    """)


def box_rect(driver):
    return driver.execute_script("""
        const b = document.querySelector('#box');
        if (!b || b.hidden || getComputedStyle(b).display === 'none') return null;
        const r = b.getBoundingClientRect();
        return {x: r.left, y: r.top, w: r.width, h: r.height};
    """)


def drag(driver, element, start, end, steps=6):
    """A mouse drag on element from start to end (page coordinates relative to the element's top-left)."""
    rect = driver.execute_script("const r = arguments[0].getBoundingClientRect(); return {w: r.width, h: r.height};", element)
    ox, oy = start[0] - rect["w"] / 2, start[1] - rect["h"] / 2  # Selenium 4 offsets are from the centre
    chain = ActionChains(driver, duration=50).move_to_element_with_offset(element, int(ox), int(oy)).click_and_hold()
    dx, dy = (end[0] - start[0]) / steps, (end[1] - start[1]) / steps
    moved_x = moved_y = 0
    for i in range(1, steps + 1):
        tx, ty = int(round(dx * i)), int(round(dy * i))
        chain.move_by_offset(tx - moved_x, ty - moved_y)
        moved_x, moved_y = tx, ty
    chain.release().perform()


# ------------------------------------------------------------------------------------------------ the run


class PageTest:
    def __init__(self, args):
        self.args = args
        self.binary = os.path.abspath(args.vsearch)
        self.corpus = os.path.abspath(args.corpus)
        self.shots = os.path.abspath(args.screenshots)
        self.only = set(args.only.split(",")) if args.only else None
        self.steps = []
        self.allowed = {}  # step → regexes of console entries expected there
        self.servers = []
        self.browser = None
        self.driver = None
        self.work = tempfile.mkdtemp(prefix="vsearch-browser-")
        self.catalog = os.path.join(self.work, "catalog.sqlite")
        with open(os.path.join(self.corpus, "catalog.csv"), newline="", encoding="utf-8") as f:
            self.metadata = {row["im_name"]: row for row in csv.DictReader(f)}
        # What later steps reuse from earlier ones.
        self.upload_url = None
        self.box_url = None
        self.clicked = None
        self.similar_url = None
        self.page2_url = None
        self.scene = None  # the composed picture for object detection (a PNG file)
        self.objects_url = None  # the page URL after uploading it

    # ---------------------------------------------------------------- plumbing

    def stop_server(self, server):
        """Stops a step's own server once the page has left it: the page reports result loads to the server's
        collector as they happen, and one still on its way when the server stops is a console error."""
        try:
            self.driver.get("about:blank")
        except Exception:
            pass
        server.stop()

    def serve(self, catalog, name, extra=()):
        web_root = ["--web-root", os.path.abspath(self.args.web_root)] if self.args.web_root else []
        server = Server(self.binary, catalog, self.work, name, [*web_root, *extra])
        self.servers.append(server)
        return server.start()

    def step(self, name, function, allowed_console=()):
        if self.only is not None and name not in self.only:
            return
        number = len(self.steps) + 1
        self.current = name
        self.allowed[name] = [re.compile(p) for p in allowed_console]
        started = time.monotonic()
        try:
            message = function() or "ok"
            passed = True
        except Failure as error:
            passed, message = False, str(error)
        except WebDriverException as error:
            passed, message = False, f"{error.__class__.__name__}: {(error.msg or '').splitlines()[0] if error.msg else ''}"
        except Exception as error:
            passed, message = False, f"{error.__class__.__name__}: {error}\n{traceback.format_exc(limit=4)}"
        screenshot = None
        if self.driver is not None:
            screenshot = f"{number:02d}-{name}.png"
            try:
                self.driver.save_screenshot(os.path.join(self.shots, screenshot))
            except WebDriverException:
                screenshot = None
            self.browser.collect_console(name)
        seconds = round(time.monotonic() - started, 2)
        self.steps.append({"name": name, "passed": passed, "message": message, "screenshot": screenshot,
                           "seconds": seconds})
        print(f"[{'PASS' if passed else 'FAIL'}] {number:02d}-{name} ({seconds} s): {message}", flush=True)

    def shot(self, label):
        """An extra screenshot within the current step: NN-step-label.png."""
        number = len(self.steps) + 1
        self.driver.save_screenshot(os.path.join(self.shots, f"{number:02d}-{self.current}-{label}.png"))

    def open(self, path, base=None):
        """Loads a path of the server (or a whole URL)."""
        self.driver.get(path if path.startswith("http") else (base or self.base) + path)

    def api(self, path):
        """GET a path of the API of the main server (open: no key)."""
        response = http(self.main.base + path)
        check(response.status == 200, f"API {path} answered {response.status}: {response.body[:300]!r}")
        return response.json()

    def stats(self, catalog=None):
        status, out, err = run([self.binary, "events", "stats", "--catalog", catalog or self.catalog, "--json",
                                "--limit", "1000"])
        check(status == 0, f"vsearch events stats failed ({status}): {err[-500:]}")
        return json.loads(out)

    def same_query_from_api(self, url, extra_fq=None):
        """The first page of names the API gives for the search a page URL describes."""
        q = params(url)
        data = {"limit": str(PAGE_LIMIT), "page": q.get("page", ["1"])[0]}
        for name in ("box", "im_id", "im_name", "color", "im_url", "similarity"):
            if name in q:
                data[name] = q[name][0]
        data["fq"] = q.get("fq", []) + ([extra_fq] if extra_fq else [])
        kind = q.get("q", [""])[0]
        route = {"upload": "/uploadsearch", "url": "/uploadsearch", "similar": "/search", "color": "/colorsearch"}.get(kind)
        check(route is not None, f"no search in the URL {url}")
        answer = self.api(route + "?" + urllib.parse.urlencode(data, doseq=True))
        return [r["im_name"] for r in answer.get("result", [])]

    # ---------------------------------------------------------------- the run

    def run(self):
        os.makedirs(self.shots, exist_ok=True)
        for stale in os.listdir(self.shots):
            if re.match(r"^\d\d-.*\.png$", stale):
                os.remove(os.path.join(self.shots, stale))
        started = time.monotonic()
        setup_error = None
        try:
            index(self.binary, os.path.join(self.corpus, "images"), os.path.join(self.corpus, "catalog.csv"), self.catalog)
            self.main = self.serve(self.catalog, "main")
            self.base = self.main.base
            self.browser = Browser(self.work)
            self.driver = self.browser.driver
        except Exception as error:
            setup_error = f"{error.__class__.__name__}: {error}"
            self.steps.append({"name": "setup", "passed": False, "message": setup_error, "screenshot": None, "seconds": 0})
            print(f"[FAIL] setup: {setup_error}", flush=True)
        try:
            if setup_error is None:
                self.step("headers", self.check_headers)
                self.step("upload", self.check_upload)
                self.step("box", self.check_box)
                self.step("facet", self.check_facet)
                self.step("detail", self.check_detail)
                self.step("paging", self.check_paging)
                self.step("shareable-url", self.check_shareable)
                self.step("colour", self.check_colour)
                self.step("similarity", self.check_similarity)
                self.step("similarity-colour-only", self.check_similarity_colour_only, allowed_console=[r"status of 400"])
                self.step("click-counted", self.check_click_counted)
                self.step("analytics", self.check_analytics)
                self.step("keyboard", self.check_keyboard)
                self.step("phone-width", self.check_phone)
                self.step("hostile-catalog", self.check_hostile, allowed_console=[r"status of 400"])
                self.step("keys", self.check_keys, allowed_console=[r"status of 401"])
                self.step("objects", self.check_objects)
                self.step("object-click", self.check_object_click)
                self.step("every-product", self.check_every_product)
                self.step("objects-off", self.check_objects_off)
                self.step("console", self.check_console)
        finally:
            if self.browser is not None:
                self.browser.quit()
            for server in self.servers:
                server.stop()
        passed = bool(self.steps) and all(s["passed"] for s in self.steps)
        result = {
            "passed": passed, "seconds": round(time.monotonic() - started, 1), "steps": self.steps,
            "screenshots": self.shots, "chromium": self.browser.version if self.browser else None,
            "selenium": selenium.__version__,
            "console": [{"step": step, **entry} for step, entry in (self.browser.console if self.browser else [])],
        }
        if self.args.json:
            os.makedirs(os.path.dirname(os.path.abspath(self.args.json)), exist_ok=True)
            with open(self.args.json, "w", encoding="utf-8") as f:
                json.dump(result, f, indent=2)
        failed = [s["name"] for s in self.steps if not s["passed"]]
        print(f"browser tests: {len(self.steps) - len(failed)} passed, {len(failed)} failed"
              + (f" ({', '.join(failed)})" if failed else "") + f" in {result['seconds']} s; screenshots in {self.shots}",
              flush=True)
        if os.environ.get("VSEARCH_BROWSER_KEEP") != "1":
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            print(f"kept {self.work}")
        return 2 if setup_error else (0 if passed else 1)

    # ---------------------------------------------------------------- steps

    def check_headers(self):
        """Response headers of the page, its assets and images (urllib, no browser)."""
        notes, every = [], set()
        for path in ["/", "/analytics"]:
            page = http(self.base + path)
            check(page.status == 200, f"GET {path}: {page.status}")
            check((page.header("content-type") or "").startswith("text/html"),
                  f"GET {path}: Content-Type {page.header('content-type')!r}, expected text/html")
            check(page.header("x-content-type-options") == "nosniff", f"GET {path}: no X-Content-Type-Options: nosniff")
            policy = page.header("content-security-policy") or ""
            directives = {d.split()[0]: " ".join(d.split()[1:]) for d in policy.split(";") if d.strip()}
            for name, value in CSP.items():
                check(set(directives.get(name, "").split()) == set(value.split()),
                      f"GET {path}: CSP {name} is {directives.get(name)!r}, the contract says {value!r} (header: {policy!r})")
            html = page.body.decode("utf-8", "replace")
            check(not re.search(r"<script(?![^>]*\bsrc\s*=)[^>]*>", html, re.I), f"{path} has an inline <script>")
            check(not re.search(r"<style[\s>]", html, re.I), f"{path} has an inline <style>")
            check(not re.search(r"\sstyle\s*=", html, re.I), f"{path} has a style= attribute")
            check(not re.search(r"\son[a-z]+\s*=", html, re.I), f"{path} has an on…= handler attribute")
            assets = re.findall(r"""<(?:script[^>]*\bsrc|link[^>]*\bhref)\s*=\s*["']([^"']+)["']""", html, re.I)
            check(any(a.endswith(".js") for a in assets), f"{path} loads no script: {assets}")
            todo, seen = [a for a in assets if a.startswith("/ui/")], set()
            while todo:
                asset = todo.pop()
                if asset in seen:
                    continue
                seen.add(asset)
                response = http(self.base + asset)
                check(response.status == 200, f"GET {asset}: {response.status}")
                kind = response.header("content-type") or ""
                expected = {"js": ("text/javascript", "application/javascript"), "css": ("text/css",)}.get(asset.rsplit(".", 1)[-1])
                if expected:
                    check(kind.split(";")[0].strip() in expected, f"GET {asset}: Content-Type {kind!r}, expected {expected[0]}")
                check(response.header("x-content-type-options") == "nosniff", f"GET {asset}: no X-Content-Type-Options: nosniff")
                if asset.endswith(".js"):  # follow the modules it imports
                    for imported in re.findall(r"""(?:import|from)\s*\(?\s*["']([^"']+\.js)["']""", response.body.decode("utf-8", "replace")):
                        todo.append(urllib.parse.urljoin(asset, imported))
            notes.append(f"{path}: {len(seen)} assets")
            every.update(seen)
        check("/ui/app.js" in every, f"the page does not load /ui/app.js: {sorted(every)}")

        image = http(self.base + "/images/chelsea_cat?size=400")
        check(image.status == 200, f"GET /images/chelsea_cat?size=400: {image.status}")
        check(image.header("content-type") == "image/jpeg", f"thumbnail Content-Type {image.header('content-type')!r}")
        check(image.header("x-content-type-options") == "nosniff", "thumbnail: no X-Content-Type-Options: nosniff")
        cache = (image.header("cache-control") or "").replace(" ", "")
        check("public" in cache and "max-age=3600" in cache, f"thumbnail Cache-Control {image.header('cache-control')!r}")
        etag = image.header("etag")
        check(etag, "thumbnail: no ETag")
        size = jpeg_size(image.body)
        check(size is not None and max(size) == 400, f"?size=400 of a 451×300 picture is {size}, expected 400 wide")
        again = http(self.base + "/images/chelsea_cat?size=400", headers={"If-None-Match": etag})
        check(again.status == 304, f"If-None-Match with the ETag: {again.status}, expected 304")
        other = http(self.base + "/images/chelsea_cat?size=800")
        check(other.status == 200 and jpeg_size(other.body) == (451, 300), f"?size=800 of a 451×300 picture: {other.status} {jpeg_size(other.body)}")
        check(other.header("etag") != etag, "the ETag does not depend on the size asked")
        original = http(self.base + "/images/chelsea_cat")
        check(original.status == 200 and jpeg_size(original.body) == (451, 300), f"the original: {original.status} {jpeg_size(original.body)}")
        missing = http(self.base + "/images/no_such_image_here")
        check(missing.status == 404, f"an unknown im_name: {missing.status}, expected 404")
        self.open("/")
        return f"CSP, nosniff and content types on / and /analytics ({'; '.join(notes)}); thumbnail 400 px with ETag, 304 on If-None-Match, 404 for unknown"

    def check_upload(self):
        d = self.driver
        self.open("/")
        before = wait_results(d, what="the catalog browser at /")
        upload = by_id(d, "upload-input")
        upload.send_keys(os.path.join(self.corpus, "images", "chelsea_cat.jpg"))
        now = wait_results(d, before, min_loaded=5, timeout=60, what="the upload search")
        check(len(now["names"]) >= 5, f"only {len(now['names'])} results after the upload")
        check(now["loaded"] >= 5, f"only {now['loaded']} result pictures loaded")
        url = d.current_url
        check(one(url, "q") == "upload" and one(url, "im_id"), f"the URL is not q=upload&im_id=…: {url}")
        check(now["reqid"], "#results has no data-reqid")
        shown = by_id(d, "reqid").text
        check(now["reqid"] in shown, f"#reqid shows {shown!r}, not the reqid {now['reqid']}")
        check(now["names"][0] == "chelsea_cat", f"the photo itself is not the first result: {now['names'][:5]}")
        wait_for(d, "#query-image to show the photo",
                 lambda d: d.execute_script("const i = document.querySelector('#query-image'); return !!i && !i.hidden && i.complete && i.naturalWidth > 0"))
        self.upload_url, self.upload_names = url, now["names"]
        return f"{now['loaded']} of {len(now['names'])} result pictures loaded, first {now['names'][0]}, reqid {now['reqid']} shown"

    def check_box(self):
        d = self.driver
        if self.upload_url is None:
            self.open("/?q=similar&im_name=chelsea_cat")
        elif d.current_url != self.upload_url:
            self.open(self.upload_url)
        before = wait_results(d, what="the search before the box")
        image = wait_for(d, "#query-image to load", lambda d: query_image_rect(d))
        element = by_id(d, "query-image")
        offset = d.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top];", element)
        # The cat's head: right half, upper part of the picture.
        fx1, fy1, fx2, fy2 = 0.45, 0.15, 0.9, 0.75
        start = (image["x"] - offset[0] + fx1 * image["w"], image["y"] - offset[1] + fy1 * image["h"])
        end = (image["x"] - offset[0] + fx2 * image["w"], image["y"] - offset[1] + fy2 * image["h"])
        drag(d, element, start, end)
        wait_for(d, "box= in the URL", lambda d: one(d.current_url, "box"), last=lambda d: d.current_url)
        now = wait_results(d, before, min_loaded=5, what="the search of the box")
        x1, y1, x2, y2 = parse_box(d.current_url)
        nw, nh = image["nw"], image["nh"]
        check(0 <= x1 < x2 <= nw and 0 <= y1 < y2 <= nh, f"box {x1},{y1},{x2},{y2} is not inside the {nw}×{nh} picture")
        tolerance = max(8, 0.05 * max(nw, nh))
        expected = (fx1 * nw, fy1 * nh, fx2 * nw, fy2 * nh)
        check(all(abs(a - b) <= tolerance for a, b in zip((x1, y1, x2, y2), expected)),
              f"box={x1:g},{y1:g},{x2:g},{y2:g} in picture pixels, but the drag covered about "
              + ",".join(f"{v:.0f}" for v in expected) + f" (±{tolerance:.0f}) of the {nw}×{nh} picture")
        shown = box_rect(d)
        check(shown is not None, "#box is not shown after the drag")
        drawn = (image["x"] + fx1 * image["w"], image["y"] + fy1 * image["h"], (fx2 - fx1) * image["w"], (fy2 - fy1) * image["h"])
        check(abs(shown["x"] - drawn[0]) <= 10 and abs(shown["y"] - drawn[1]) <= 10
              and abs(shown["w"] - drawn[2]) <= 12 and abs(shown["h"] - drawn[3]) <= 12,
              f"#box is drawn at {shown}, the drag was from {drawn[0]:.0f},{drawn[1]:.0f} size {drawn[2]:.0f}×{drawn[3]:.0f}")
        check(now["names"] != before["names"], f"the results did not change with the box: {now['names'][:6]}")
        self.box_url = d.current_url
        return f"box={x1:g},{y1:g},{x2:g},{y2:g} of {nw}×{nh}; results changed: {before['names'][:4]} → {now['names'][:4]}"

    def check_facet(self):
        d = self.driver
        if self.box_url and d.current_url != self.box_url:
            self.open(self.box_url)
        elif not self.box_url and not self.upload_url:
            self.open("/?q=similar&im_name=chelsea_cat")
        before = wait_results(d, what="the search before the facet")
        facets = wait_for(d, "#facets .facet[data-field] with checkboxes", lambda d: d.execute_script("""
            return [...document.querySelectorAll('#facets .facet[data-field]')].map(f => ({field: f.dataset.field,
              values: [...f.querySelectorAll('input[type=checkbox][data-value]')].map(i => i.dataset.value)}))
              .filter(f => f.values.length > 0);
        """), last=lambda d: d.execute_script("return (document.querySelector('#facets') || {}).outerHTML"))
        present = {f["field"]: f["values"] for f in facets}
        choice = None
        fields = [f for f in ("subcategory", "category", "brand") if f in present] + [f for f in present if f not in ("subcategory", "category", "brand")]
        for field in fields:
            if field not in next(iter(self.metadata.values())):
                continue
            shown = [self.metadata.get(n, {}).get(field) for n in before["names"]]
            for value in present[field]:
                if 0 < shown.count(value) < len(shown):  # narrows the results without emptying them
                    choice = (field, value)
                    break
            if choice:
                break
        check(choice is not None, f"no facet value narrows the results; facets: { {f: v[:5] for f, v in present.items()} }")
        field, value = choice
        click(d, facet_checkbox(d, field, value))
        now = wait_results(d, before, min_loaded=1, what=f"the search with {field}:{value}")
        check(f"{field}:{value}" in params(d.current_url).get("fq", []), f"the URL has no fq={field}:{value}: {d.current_url}")
        ticked = facet_checkbox(d, field, value)
        check(ticked is not None and ticked.is_selected(), "the ticked checkbox is not checked after the search")
        chip = d.execute_script("""return [...document.querySelectorAll('#active-filters .chip[data-field][data-value]')]
            .find(c => c.dataset.field === arguments[0] && c.dataset.value === arguments[1]) || null;""", field, value)
        check(chip is not None and chip.is_displayed(), f"no visible #active-filters .chip[data-field={field}][data-value={value}]")
        wrong = [(n, self.metadata.get(n, {}).get(field)) for n in now["names"] if self.metadata.get(n, {}).get(field) != value]
        check(not wrong, f"results with {field} other than {value!r}: {wrong[:5]}")
        expected = [n for n in self.same_query_from_api(before["url"], extra_fq=f"{field}:{value}")]
        check(now["names"] == expected, f"the page shows {now['names'][:8]}…, the API answers {expected[:8]}… for the same query")
        total = sum(1 for row in self.metadata.values() if row.get(field) == value)
        check(len(now["names"]) == min(PAGE_LIMIT, total), f"{len(now['names'])} results, but {total} catalog images have {field}={value!r}")
        facet_names = now["names"]
        remove = chip.find_elements(By.CSS_SELECTOR, "button.chip-remove")
        check(remove, "the chip has no button.chip-remove")
        remove[0].click()
        restored = wait_results(d, now, min_loaded=1, what="the search after removing the chip")
        check(f"{field}:{value}" not in params(d.current_url).get("fq", []), f"fq={field}:{value} still in the URL: {d.current_url}")
        check(restored["names"] == before["names"], f"removing the chip did not restore the results: {restored['names'][:6]} vs {before['names'][:6]}")
        check(not d.execute_script("return document.querySelectorAll('#active-filters .chip').length"), "a chip is left in #active-filters")
        # Tick it again for the screenshot a person would look at.
        box = facet_checkbox(d, field, value)
        check(box is not None and not box.is_selected(), "after removing the chip the checkbox is gone or still checked")
        if box is not None:
            click(d, box)
            wait_results(d, restored, min_loaded=1, what="the facet ticked again")
            # The screenshot: the chip (the filter panel scrolls on its own), the query with its box, the results.
            d.execute_script("document.querySelector('#active-filters').scrollIntoView({block: 'nearest'}); window.scrollTo(0, 0);")
        return (f"ticked {field}={value!r}: {len(facet_names)} results, all {field}={value!r} (as many as the catalog has, "
                f"same as the API), chip shown; removing the chip restored the {len(before['names'])} results")

    def check_detail(self):
        d = self.driver
        if self.box_url:
            self.open(self.box_url)
        else:
            self.open("/?q=similar&im_name=chelsea_cat")
        before = wait_results(d, min_loaded=2, what="the search before opening a result")
        name = before["names"][1] if len(before["names"]) > 1 else before["names"][0]
        click_result(d, name)
        self.clicked = name
        state = wait_for(d, f"#detail open on {name} with metadata, its picture and loaded recommendations",
                         lambda d: (lambda s: s if s and s["open"] and name in s["name"] and s["image"] and s["rows"]
                                    and s["recState"] == "ready" and s["recLoaded"] >= 1 else False)(detail(d)),
                         last=detail)
        rows = dict(state["rows"])
        row = self.metadata.get(name, {})
        for field in ("category", "brand"):
            if row.get(field):
                check(field in rows and row[field] in rows[field],
                      f"#detail-metadata tr[data-field={field}] shows {rows.get(field)!r}, the catalog has {row[field]!r}")
        d.execute_script("document.querySelector('#detail-recommendations').scrollIntoView({block: 'end'})")
        self.shot("open")
        click(d, by_id(d, "detail-similar"))  # scrolled to the middle: the dialog's sticky head can cover it
        now = wait_results(d, before, min_loaded=1, what=f"the search similar to {name}")
        url = d.current_url
        check(one(url, "q") == "similar" and one(url, "im_name") == name, f"the URL is not q=similar&im_name={name}: {url}")
        check(not detail(d)["open"], "#detail is still open after #detail-similar")
        check(now["names"] == self.same_query_from_api(url), "the similar search differs from the API's answer")
        self.similar_url = url
        return (f"{name}: {len(state['rows'])} metadata rows, {len(state['recs'])} recommendations ({state['recLoaded']} "
                f"pictures loaded); #detail-similar → q=similar&im_name={name}, {len(now['names'])} results")

    def check_paging(self):
        d = self.driver
        url = self.similar_url or f"{self.base}/?q=similar&im_name=chelsea_cat"
        self.open(url)
        first = wait_results(d, min_loaded=1, what="page 1")
        number = lambda: (re.findall(r"\d+", by_id(d, "page-number").text) or ["?"])[0]  # noqa: E731
        check(number() == "1", f"#page-number shows {by_id(d, 'page-number').text!r} on page 1")
        check(len(first["names"]) == PAGE_LIMIT, f"page 1 has {len(first['names'])} results, expected {PAGE_LIMIT} (102 images)")
        by_id(d, "next-page").click()
        second = wait_results(d, first, min_loaded=1, what="page 2")
        check(number() == "2", f"#page-number shows {by_id(d, 'page-number').text!r} after #next-page")
        check(one(d.current_url, "page") == "2", f"the URL has no page=2: {d.current_url}")
        overlap = set(first["names"]) & set(second["names"])
        check(second["names"] and not overlap, f"page 2 repeats page 1: {sorted(overlap)[:5]}")
        check(second["names"] == self.same_query_from_api(d.current_url), "page 2 differs from the API's page 2")
        self.page2_url = d.current_url
        by_id(d, "prev-page").click()
        back = wait_results(d, second, min_loaded=1, what="page 1 again")
        check(number() == "1", f"#page-number shows {by_id(d, 'page-number').text!r} after #prev-page")
        check(back["names"] == first["names"], "page 1 again differs from page 1")
        return f"page 1 ({len(first['names'])}) → page 2 ({len(second['names'])}, none repeated, same as the API) → page 1 (same names)"

    def check_shareable(self):
        d = self.driver
        checked, tabs = [], 0
        urls = [u for u in (self.page2_url, self.box_url) if u]
        check(urls, "no earlier search to share (paging and box failed)")
        original = d.current_window_handle
        for url in urls:
            d.get(url)
            here = wait_results(d, min_loaded=1, what=f"the search at {url}")
            d.switch_to.new_window("tab")
            tabs += 1
            try:
                d.get(url)
                there = wait_results(d, min_loaded=1, what=f"{url} in a fresh tab")
                check(there["names"] == here["names"], f"{url} in a fresh tab shows {there['names'][:5]}, the first tab {here['names'][:5]}")
                if one(url, "box") and one(url, "q") != "upload":  # an uploaded photo is not shown again after a reload
                    wait_for(d, "the URL's box drawn in the fresh tab", box_rect)
                if one(url, "page"):
                    text = by_id(d, "page-number").text
                    check(one(url, "page") in re.findall(r"\d+", text)[:1], f"#page-number shows {text!r} for page={one(url, 'page')}")
                checked.append(f"{urllib.parse.urlsplit(url).query} ({len(there['names'])} results)")
            finally:
                if len(d.window_handles) > 1:
                    self.shot(f"tab-{tabs}")
                    d.close()
                d.switch_to.window(original)
        return "same results in a fresh tab for " + "; ".join(checked)

    def check_colour(self):
        d = self.driver
        self.open("/")
        before = wait_results(d, what="the catalog browser")
        colour = by_id(d, "color-input")
        d.execute_script("""const e = arguments[0]; e.value = '#2a9d8f';
            e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true}));""", colour)
        by_id(d, "color-submit").click()
        now = wait_results(d, before, min_loaded=5, what="the colour search")
        url = d.current_url
        check(one(url, "q") == "color" and (one(url, "color") or "").lower().lstrip("#") == "2a9d8f",
              f"the URL is not q=color&color=2a9d8f: {url}")
        check(len(now["names"]) >= 5 and now["loaded"] >= 5, f"{len(now['names'])} results, {now['loaded']} pictures loaded")
        expected = self.same_query_from_api(url)
        check(now["names"] == expected, f"the page shows {now['names'][:6]}, the API {expected[:6]}")
        shown = similarity(d)
        check(not shown["shown"] and not shown["label"], f"a colour search shows the similarity switch or a label: {shown}")
        return f"#2a9d8f: {len(now['names'])} results, {now['loaded']} pictures loaded, same as the API; no similarity switch"

    def check_similarity(self):
        """Learned similarity by default ("Looks like"), the switch to colours re-runs the query with similarity=color,
        the detail's recommendations follow it, a reload keeps it, the keyboard moves it."""
        d = self.driver
        name = "tp_clothes_hats_sombrero"  # hats look like hats; by colour it finds guitars and spices
        default = self.api(f"/search?im_name={name}&limit={PAGE_LIMIT}")
        check(default.get("similarity") == "visual",
              f"the API answers similarity={default.get('similarity')!r} for a search on the test catalog, expected visual: the "
              f"catalog has no learned vectors — install the model (scripts/install-model.sh) before running the browser tests")
        labels = {"visual": "Looks like", "color": "Same colours", "fused": "Looks like + colours"}

        def expect(mode, where, requested=None):
            state = wait_for(d, f"#similarity[data-similarity={mode}] ({where})",
                             lambda d: (lambda s: s if s and s["answered"] == mode else False)(similarity(d)),
                             last=similarity)
            check(state["shown"], f"{where}: #similarity is not shown")
            check(state["checked"] == (requested or mode), f"{where}: the checked switch is {state['checked']!r}, expected {requested or mode!r}")
            check(state["label"] == labels[mode], f"{where}: #similarity-label says {state['label']!r}, expected {labels[mode]!r}")
            check(state["grid"] == mode, f"{where}: #results[data-similarity={state['grid']!r}], expected {mode}")
            return state

        self.open(f"/?q=similar&im_name={name}")
        visual = wait_results(d, min_loaded=5, what="the search similar to a catalog image")
        expect("visual", "by default")
        check(one(d.current_url, "similarity") is None, f"the default put similarity= in the URL: {d.current_url}")
        check(visual["names"] == [r["im_name"] for r in default["result"]],
              f"the page shows {visual['names'][:6]}, the API's default {[r['im_name'] for r in default['result']][:6]}")
        show_results_from_query(d)
        self.shot("visual")

        d.execute_script("performance.clearResourceTimings()")
        click(d, by_id(d, "similarity-color"))
        colour = wait_results(d, visual, min_loaded=5, what="the search after choosing Same colours")
        expect("color", "after choosing Same colours")
        url = d.current_url
        check(one(url, "similarity") == "color" and one(url, "im_name") == name and one(url, "q") == "similar",
              f"the URL is not q=similar&im_name={name}&similarity=color: {url}")
        sent = requests_to(d, "/search")
        check(sent and all(query_of(u).get("similarity") == ["color"] for u in sent),
              f"the page's /search requests after the switch: {sent} (expected similarity=color in each)")
        check(colour["names"] != visual["names"], f"the results did not change: {colour['names'][:6]}")
        expected = self.same_query_from_api(url)
        check(colour["names"] == expected, f"the page shows {colour['names'][:6]}, the API with similarity=color {expected[:6]}")
        show_results_from_query(d)
        self.shot("colour")

        d.execute_script("performance.clearResourceTimings()")
        opened = colour["names"][1]
        click_result(d, opened)
        recs = wait_for(d, f"#detail of {opened} with recommendations ranked by colour",
                        lambda d: (lambda s: s if s and s["open"] and opened in s["name"] and s["recState"] == "ready" else False)(detail(d)),
                        last=detail)
        shown = d.execute_script("""const l = document.querySelector('#detail-similarity');
            return {label: l && !l.hidden ? l.textContent.trim() : '', list: document.querySelector('#detail-recommendations').dataset.similarity || ''};""")
        check(shown == {"label": labels["color"], "list": "color"},
              f"#detail-similarity / #detail-recommendations[data-similarity]: {shown}, expected {labels['color']!r} / color")
        sent = requests_to(d, "/recommendations")
        check(sent and all(query_of(u).get("similarity") == ["color"] for u in sent),
              f"the detail's /recommendations requests: {sent} (expected similarity=color)")
        by_id(d, "detail-close").click()
        wait_for(d, "#detail closed", lambda d: not detail(d)["open"])

        d.refresh()
        again = wait_results(d, min_loaded=5, what="the page reloaded")
        expect("color", "after a reload")
        check(one(d.current_url, "similarity") == "color", f"the reload lost similarity=color: {d.current_url}")
        check(again["names"] == colour["names"], f"after the reload {again['names'][:6]}, before {colour['names'][:6]}")

        focused, presses = tab_until(d, lambda a: a["id"].startswith("similarity-"))
        check(focused["id"] == "similarity-color", f"Tab reaches #{focused['id']} first, expected the checked #similarity-color")
        press(d, Keys.ARROW_LEFT)
        keyed = wait_results(d, again, min_loaded=5, what="the search after ArrowLeft on the switch")
        expect("visual", "after ArrowLeft")
        check(one(d.current_url, "similarity") == "visual", f"ArrowLeft did not put similarity=visual in the URL: {d.current_url}")
        check(keyed["names"] == visual["names"], f"Looks like again shows {keyed['names'][:6]}, by default {visual['names'][:6]}")
        still = d.execute_script(ACTIVE_JS)["id"]
        click(d, by_id(d, "similarity-color"))  # the screenshot: colours chosen
        wait_results(d, keyed, min_loaded=5, what="Same colours again")
        expect("color", "Same colours again")
        return (f"{name}: Looks like by default {visual['names'][1:4]}; Same colours → similarity=color in the URL and the "
                f"/search and /recommendations requests, {colour['names'][1:4]}; kept on reload; Tab ({presses}) reaches the switch, "
                f"ArrowLeft → Looks like (focus {'stays on #' + still if still else 'lost'})")

    def check_similarity_colour_only(self):
        """On a catalog indexed without the learned model: colours by default, "Looks like" shows the server's error
        and the switch still works."""
        d = self.driver
        catalog = os.path.join(self.work, "colour-only.sqlite")
        index(self.binary, os.path.join(self.corpus, "images"), os.path.join(self.corpus, "catalog.csv"), catalog, ["--color-only"])
        server = self.serve(catalog, "colour-only")
        base = server.base
        try:
            self.open("/?q=similar&im_name=coffee_cup", base)
            before = wait_results(d, min_loaded=3, what="a search on a colour-only catalog")
            state = wait_for(d, "#similarity[data-similarity=color]", lambda d: (lambda s: s if s and s["answered"] == "color" else False)(similarity(d)),
                             last=similarity)
            check(state["checked"] == "color" and state["label"] == "Same colours", f"the default on a colour-only catalog: {state}")
            click(d, by_id(d, "similarity-visual"))
            failed = wait_for(d, "#results[data-state=error] with #error", lambda d: (lambda r: r if r and r["state"] == "error" and r["error"] else False)(results(d)),
                              last=lambda d: describe(results(d)))
            check("learned" in failed["error"].lower(), f"#error says {failed['error']!r}, expected the server's message about learned similarity")
            check(one(d.current_url, "similarity") == "visual", f"the URL after choosing Looks like: {d.current_url}")
            state = similarity(d)
            check(state["shown"] and state["checked"] == "visual" and state["answered"] == "" and not state["label"],
                  f"after the error: {state} (expected the switch shown, visual checked, nothing answered, no label)")
            self.shot("error")
            click(d, by_id(d, "similarity-color"))
            now = wait_results(d, min_loaded=3, what="Same colours after the error")
            state = wait_for(d, "#similarity[data-similarity=color] again", lambda d: (lambda s: s if s and s["answered"] == "color" else False)(similarity(d)),
                             last=similarity)
            check(not results(d)["error"], "#error is still shown after a search that answered")
            check(now["names"] == before["names"], f"Same colours shows {now['names'][:5]}, the default {before['names'][:5]}")
        finally:
            self.stop_server(server)
        return (f"colour-only catalog: Same colours by default; Looks like → #error {failed['error'][:90]!r}…, switch still "
                f"shown; Same colours again → {len(now['names'])} results")

    def check_click_counted(self):
        d = self.driver
        self.open("/?q=similar&im_name=coffee_cup")
        search = wait_results(d, min_loaded=5, what="the search")
        name = search["names"][2]
        before = self.stats()
        clicks_before = next((p["clicks"] for p in before["products"] if p["key"] == name), 0)
        click_result(d, name)
        wait_for(d, f"#detail open on {name}", lambda d: (lambda s: s and s["open"] and name in s["name"])(detail(d)))
        by_id(d, "detail-close").click()
        wait_for(d, "#detail closed", lambda d: not detail(d)["open"])

        def counted():
            now = self.stats()
            product = next((p for p in now["products"] if p["key"] == name), None)
            query = next((q for q in now["queries"] if q["key"] == search["reqid"]), None)
            actions = now.get("actions", {})
            ok = (product and product["clicks"] >= clicks_before + 1 and query and query["clicks"] >= 1
                  and actions.get("product_click", 0) >= 1 and actions.get("result_load", 0) > 0
                  and actions.get("product_view", 0) > 0)
            counted.last = (actions, product, query)
            return now if ok else False
        counted.last = None
        try:
            now = wait_until("the click in vsearch events stats", counted, timeout=5)
        except Failure:
            actions, product, query = counted.last
            raise Failure(f"5 s after the click, vsearch events stats --json shows actions {actions}, "
                          f"product {name}: {product}, query {search['reqid']}: {query} (expected product_click ≥ 1, "
                          f"{name} clicks ≥ {clicks_before + 1}, the query's clicks ≥ 1, result_load and product_view > 0)") from None
        self.clicked = name
        actions = now["actions"]
        return (f"clicked {name}: events stats counts product_click {actions.get('product_click')}, result_load "
                f"{actions.get('result_load')}, product_view {actions.get('product_view')}; {name} and query {search['reqid']} have the click")

    def check_analytics(self):
        d = self.driver
        check(self.clicked, "no result was clicked before (detail and click-counted failed)")
        self.open("/analytics")
        wait_for(d, "#analytics[data-state=ready]", lambda d: d.execute_script(
            "const a = document.querySelector('#analytics'); if (a && a.dataset.state === 'error') return 'error'; return a && a.dataset.state === 'ready';"),
            last=lambda d: d.execute_script("const a = document.querySelector('#analytics'); return a ? a.dataset.state + ' ' + a.innerText.slice(0, 300) : 'no #analytics'"))
        check(d.execute_script("return document.querySelector('#analytics').dataset.state") == "ready",
              "#analytics[data-state=error]: " + d.execute_script("return (document.querySelector('#error') || {}).textContent || ''"))
        name = self.clicked
        row = wait_for(d, f"#products-table tr[data-key={name}] with its picture", lambda d: d.execute_script("""
            const row = [...document.querySelectorAll('#products-table tr[data-key]')].find(r => r.dataset.key === arguments[0]);
            if (!row) return false;
            const img = row.querySelector('img');
            return img && img.complete && img.naturalWidth > 0 ? row.innerText : false;""", name),
            last=lambda d: d.execute_script("return [...document.querySelectorAll('#products-table tr[data-key]')].map(r => r.dataset.key)"))
        timeline = d.execute_script("""
            const t = document.querySelector('#timeline'); if (!t) return null;
            const svg = t.tagName.toLowerCase() === 'svg' ? t : t.querySelector('svg');
            return svg ? {marks: svg.querySelectorAll('rect, path, polyline, line, circle').length,
                          w: svg.getBoundingClientRect().width, h: svg.getBoundingClientRect().height} : {marks: -1};""")
        check(timeline is not None, "no #timeline")
        check(timeline["marks"] >= 1, f"#timeline is not an SVG plot with marks: {timeline}")
        check(timeline["w"] > 50 and timeline["h"] > 20, f"#timeline is {timeline['w']}×{timeline['h']} px")
        total = by_id(d, "total-events").text
        numbers = [int(n) for n in re.findall(r"\d+", total.replace(",", ""))]
        check(numbers and numbers[0] >= 3, f"#total-events shows {total!r}, expected at least 3 events")
        check(d.find_elements(By.CSS_SELECTOR, "#queries-table tr[data-key]"), "#queries-table has no rows")
        check(d.find_elements(By.ID, "since"), "no #since")
        return f"row {name} ({' '.join(row.split())[:60]}), #timeline SVG with {timeline['marks']} marks, #total-events {total!r}"

    def check_keyboard(self):
        d = self.driver
        self.open("/?q=similar&im_name=chelsea_cat")
        wait_results(d, min_loaded=3, what="the search")
        upload, presses = tab_until(d, lambda a: a["id"] in ("upload-input", "dropzone"))
        reached_upload = f"#{upload['id']} after {presses} Tab"
        info, presses = tab_until(d, lambda a: a["result"] is not None)
        name = info["result"]
        press(d, Keys.ENTER)
        wait_for(d, f"Enter on the focused result {name} to open #detail",
                 lambda d: (lambda s: s and s["open"] and name in s["name"])(detail(d)), last=detail)
        press(d, Keys.ESCAPE)
        wait_for(d, "Escape to close #detail", lambda d: not detail(d)["open"])
        refocused = d.execute_script(ACTIVE_JS)["result"] == name

        self.open("/?q=similar&im_name=chelsea_cat&box=100,60,300,240")
        before = wait_results(d, min_loaded=1, what="the search with a box")
        wait_for(d, "#box drawn", lambda d: box_rect(d))
        start_box = parse_box(d.current_url)
        _, box_presses = tab_until(d, lambda a: a["id"] == "box")
        press(d, Keys.ARROW_RIGHT, times=3)
        press(d, Keys.ENTER)
        moved = wait_results(d, before, what="the search after arrow keys and Enter on #box")
        wait_for(d, "the URL's box to move right", lambda d: parse_box(d.current_url)[0] > start_box[0], last=lambda d: d.current_url)
        x1, y1, x2, y2 = parse_box(d.current_url)
        check(y1 == start_box[1] and y2 == start_box[3], f"ArrowRight moved the box vertically: {start_box} → {[x1, y1, x2, y2]}")
        check(abs((x2 - x1) - (start_box[2] - start_box[0])) < 1, f"ArrowRight resized the box: {start_box} → {[x1, y1, x2, y2]}")
        still_focused = d.execute_script(ACTIVE_JS)["id"] == "box"
        if not still_focused:
            tab_until(d, lambda a: a["id"] == "box")
        press(d, Keys.ARROW_RIGHT, times=3, modifier=Keys.SHIFT)
        press(d, Keys.ENTER)
        wait_results(d, moved, what="the search after Shift+arrows and Enter on #box")
        wait_for(d, "Shift+ArrowRight to widen the box", lambda d: (lambda b: b[2] - b[0] > x2 - x1)(parse_box(d.current_url)),
                 last=lambda d: d.current_url)
        wider = parse_box(d.current_url)
        return (f"Tab reaches {reached_upload} and result {name} ({presses} Tab); Enter opens it, Escape closes it"
                f"{' and focus returns to it' if refocused else ' (focus did not return to the result)'}; #box after "
                f"{box_presses} Tab: arrows moved it {start_box} → {[x1, y1, x2, y2]}, Shift+arrows widened it to {wider}, "
                f"each time searched again{'' if still_focused else ' (focus left #box after the search)'}")

    def check_phone(self):
        d = self.driver
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": True})
        seen = []
        try:
            def no_scroll(where):
                o = d.execute_script(OVERFLOW_JS)
                check(o["inner"] == 375, f"{where}: the layout is {o['inner']} px wide on a 375 px screen (no viewport meta, or "
                                         f"content wider than the screen); too wide: {o['wide']}")
                check(o["scroll"] <= o["inner"], f"{where}: scrollWidth {o['scroll']} > innerWidth {o['inner']}; too wide: {o['wide']}")
                if o["dialog"]:
                    check(o["dialog"]["scroll"] <= o["dialog"]["client"] + 1 and o["dialog"]["right"] <= o["inner"] + 1,
                          f"{where}: the open dialog scrolls sideways or sticks out: {o['dialog']}; too wide: {o['wide']}")
                seen.append(f"{where} {o['scroll']}/{o['inner']}")
            self.open("/?q=similar&im_name=chelsea_cat&box=40,20,300,260")
            now = wait_results(d, min_loaded=2, what="the search at phone width")
            no_scroll("search")
            self.shot("search")
            click_result(d, now["names"][1])
            wait_for(d, "#detail open with recommendations", lambda d: (lambda s: s and s["open"] and s["recState"] == "ready" and s["image"])(detail(d)),
                     last=detail)
            no_scroll("detail")
            self.shot("detail")
            by_id(d, "detail-close").click()
            self.open("/analytics")
            wait_for(d, "#analytics[data-state=ready]", lambda d: d.execute_script("return (document.querySelector('#analytics') || {dataset: {}}).dataset.state === 'ready'"))
            no_scroll("analytics")
        finally:
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            d.set_window_size(*WINDOW)
        return "no horizontal scroll at 375 px: " + ", ".join(seen) + " (scrollWidth/innerWidth)"

    def check_hostile(self):
        """A catalog whose names and metadata are markup and script: shown as text, never run."""
        d = self.driver
        folder = os.path.join(self.work, "hostile")
        images = os.path.join(folder, "images")
        os.makedirs(images, exist_ok=True)
        evil_name = '"><img src=x onerror=window.__xss=3>'
        evil_brand = '<img src=x onerror="window.__xss=1">'
        evil_script = '"><script>window.__xss=2</script>'
        rows = [
            {"im_name": evil_name, "brand": evil_brand, "category": "javascript:window.__xss=5",
             "description": evil_script, "price": "1.5"},
            {"im_name": "cup", "brand": evil_script, "category": evil_brand,
             "description": "<b>bold</b> & <i>it</i> {{7*7}} ${window.__xss=7}", "price": "2"},
            {"im_name": "astronaut", "brand": "javascript:alert(document.domain)", "category": "plain",
             "description": '</td></tr></table><svg onload="window.__xss=8">', "price": "3"},
            {"im_name": "rocket", "brand": evil_brand, "category": "plain", "description": "a rocket", "price": "4"},
        ]
        sources = {evil_name: "chelsea_cat.jpg", "cup": "coffee_cup.jpg", "astronaut": "astronaut.jpg", "rocket": "falcon9_rocket.jpg"}
        for name, source in sources.items():
            shutil.copyfile(os.path.join(self.corpus, "images", source), os.path.join(images, name + ".jpg"))
        metadata = os.path.join(folder, "catalog.csv")
        with open(metadata, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        catalog = os.path.join(folder, "catalog.sqlite")
        index(self.binary, images, metadata, catalog, ["--schema", "brand:string,category:string,description:text,price:float"])
        # Events an older collector stored before it checked URLs and timestamps (issue 24): an image URL no
        # browser can parse, a timestamp years ahead (inside every period). /analytics must still render.
        with sqlite3.connect(catalog) as db:
            future = 1953306000000
            for event_id, action, pid in [("pin1", "result_load", None), ("pin2", "product_click", "cup")]:
                payload = {"action": action, "queryId": "pinned", "imgUrl": "http://[", "eventID": event_id, "timestamp": future}
                if pid:
                    payload.update({"pid": pid, "pos": 1})
                db.execute("INSERT INTO tracking_events (event_id, action, query_id, pid, ts, received_at, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (event_id, action, "pinned", pid, future, int(time.time() * 1000), json.dumps(payload)))
        server = self.serve(catalog, "hostile")
        base = server.base
        checked = []

        def safe(where, literal=None):
            probe = d.execute_script(INJECTION_JS)
            check(probe["xss"] is None, f"{where}: window.__xss = {probe['xss']} — script from the catalog ran")
            check(not probe["injected"], f"{where}: markup from the catalog became elements: {probe['injected'][:5]}")
            check(not probe["csp"], f"{where}: Content-Security-Policy violations: {probe['csp'][:3]}")
            if literal is not None:
                check(literal in probe["text"], f"{where}: the text {literal!r} is not shown literally")
            checked.append(where)

        try:
            self.open("/", base)
            browse = wait_results(d, min_loaded=len(sources), what="the hostile catalog's browser")
            check(sorted(browse["names"]) == sorted(sources), f"the browser lists {browse['names']}")
            check(browse["loaded"] == len(sources), f"{browse['loaded']} of {len(sources)} pictures loaded (names need URL encoding)")
            safe("catalog browser", evil_name)

            self.open("/?q=similar&im_name=" + urllib.parse.quote(evil_name, safe=""), base)
            found = wait_results(d, min_loaded=len(sources), what="the search similar to the hostile name")
            check(found["names"][0] == evil_name, f"the hostile name's own search starts with {found['names'][:1]}")
            safe("similar search", evil_name)

            click_result(d, evil_name)
            state = wait_for(d, "#detail of the hostile name", lambda d: (lambda s: s if s and s["open"] and s["rows"] and s["recState"] in ("ready", "error") else False)(detail(d)), last=detail)
            check(state["name"].strip() == evil_name or evil_name in state["name"], f"#detail-name shows {state['name']!r}")
            rows_shown = dict(state["rows"])
            check(evil_brand in rows_shown.get("brand", ""), f"brand row shows {rows_shown.get('brand')!r}")
            check(evil_script in rows_shown.get("description", ""), f"description row shows {rows_shown.get('description')!r}")
            safe("detail", evil_brand)
            self.shot("detail")
            by_id(d, "detail-close").click()

            facet = wait_for(d, "a brand facet with the hostile value", lambda d: d.execute_script("""
                const f = [...document.querySelectorAll('#facets .facet[data-field]')].find(f => f.dataset.field === 'brand');
                return f ? [...f.querySelectorAll('input[type=checkbox][data-value]')].find(i => i.dataset.value === arguments[0]) || false : false;""", evil_brand),
                last=lambda d: d.execute_script("return [...document.querySelectorAll('#facets input[data-value]')].map(i => i.dataset.value)"))
            before = results(d)
            click(d, facet)
            filtered = wait_results(d, before, min_loaded=1, what="the hostile facet value")
            check(sorted(filtered["names"]) == sorted([evil_name, "rocket"]), f"brand={evil_brand!r} gives {filtered['names']}")
            check(f"brand:{evil_brand}" in params(d.current_url).get("fq", []), f"the URL's fq: {params(d.current_url).get('fq')}")
            check(d.execute_script("""return [...document.querySelectorAll('#active-filters .chip')].some(c => c.dataset.value === arguments[0]
                && c.innerText.includes(arguments[0]))""", evil_brand), "no chip showing the hostile value as text")
            safe("facet", evil_brand)

            self.open("/?q=similar&im_name=cup&fq=" + urllib.parse.quote("brand:" + evil_script, safe=""), base)
            wait_results(d, what="a hostile fq in the URL")
            check(d.execute_script("""return [...document.querySelectorAll('#active-filters .chip')].some(c => c.dataset.value === arguments[0]
                && c.innerText.includes(arguments[0]))""", evil_script), "no chip showing the URL's hostile fq as text")
            safe("fq in the URL", evil_script)
            self.shot("fq")

            for path, where in [("/?q=url&im_url=" + urllib.parse.quote("javascript:window.__xss=4", safe=""), "im_url=javascript:"),
                                ("/?q=color&color=" + urllib.parse.quote('"><img src=x onerror=window.__xss=9>', safe=""), "a hostile color="),
                                ("/?q=similar&im_name=cup&box=" + urllib.parse.quote("1,2,3,<script>", safe=""), "a hostile box="),
                                ("/?q=similar&im_name=cup&similarity=" + urllib.parse.quote('"><img src=x onerror=window.__xss=10>', safe=""), "a hostile similarity=")]:
                self.open(path, base)
                wait_for(d, f"the page to settle on {where}", lambda d: (lambda s: s and s["state"] in ("ready", "error", "idle"))(results(d)))
                safe(where)
            self.open("/analytics", base)
            wait_for(d, "the analytics page", lambda d: d.execute_script("return (document.querySelector('#analytics') || {dataset: {}}).dataset.state === 'ready'"),
                     last=lambda d: d.execute_script("return (document.querySelector('#error') || {}).textContent || ''"))
            check(d.execute_script("return [...document.querySelectorAll('#queries-table tbody tr')].some(r => r.dataset.key === 'pinned')"),
                  "the query whose stored event has the URL 'http://[' is not in the queries table")
            safe("analytics")
        finally:
            self.stop_server(server)
        return "no script ran, no markup became elements, no CSP violation; text shown literally in: " + ", ".join(checked)

    def check_keys(self):
        d = self.driver
        catalog = os.path.join(self.work, "keys.sqlite")
        index(self.binary, os.path.join(self.corpus, "images"), os.path.join(self.corpus, "catalog.csv"), catalog)
        server = self.serve(catalog, "keys", ["--app-key", "testkey"])
        base = server.base
        dialog_open = lambda d: d.execute_script("const k = document.querySelector('#key-dialog'); return !!k && (k.tagName === 'DIALOG' ? k.open : k.offsetParent !== null);")  # noqa: E731
        refusals = lambda: server.log().count("status=401")  # noqa: E731
        try:
            self.open("/", base)
            wait_for(d, "#key-dialog to open on a server with keys", dialog_open)
            self.shot("dialog")
            refused = refusals()
            field = by_id(d, "key-input")
            field.clear()
            field.send_keys("wrongkey")
            by_id(d, "key-submit").click()
            wait_for(d, "the wrong key to be refused (401) and #key-dialog open again",
                     lambda d: refusals() > refused and dialog_open(d),
                     last=lambda d: f"401s in the server log {refused} → {refusals()}, dialog open {dialog_open(d)}")
            state = results(d)
            check(not state or state["state"] != "ready" or not state["names"], f"results shown with a wrong key: {describe(state)}")
            field = by_id(d, "key-input")
            field.clear()
            field.send_keys("testkey")
            by_id(d, "key-submit").click()
            wait_for(d, "#key-dialog to close", lambda d: not dialog_open(d))
            browse = wait_results(d, min_loaded=5, what="the catalog with the key")
            self.open("/?q=similar&im_name=chelsea_cat", base)
            found = wait_results(d, min_loaded=5, what="a search in the same tab")
            check(not dialog_open(d), "#key-dialog asked again in the same tab")
            storage = d.execute_script("""const dump = s => Object.keys(s).map(k => k + '=' + s.getItem(k)).join('\\n');
                return {session: dump(sessionStorage), local: dump(localStorage), cookie: document.cookie, url: location.href};""")
            check("testkey" in storage["session"], "the key is not in sessionStorage")
            check("testkey" not in storage["local"], "the key is in localStorage")
            check("testkey" not in storage["cookie"], "the key is in a cookie")
            check("testkey" not in storage["url"], f"the key is in the URL {storage['url']}")
            self.open("/analytics", base)
            wait_for(d, "#analytics[data-state=ready] with the key", lambda d: d.execute_script(
                "return (document.querySelector('#analytics') || {dataset: {}}).dataset.state === 'ready'"),
                last=lambda d: f"dialog open {dialog_open(d)}")
            check(not dialog_open(d), "#key-dialog asked again on the analytics page")
            original = d.current_window_handle
            d.switch_to.new_window("tab")
            try:
                d.get(base + "/")
                wait_for(d, "#key-dialog in a new tab (the key is kept for one tab only)", dialog_open)
            finally:
                d.close()
                d.switch_to.window(original)
        finally:
            self.stop_server(server)
        return (f"#key-dialog on a server with keys; a wrong key was refused (401) and the dialog reopened; the right key: "
                f"catalog ({browse['loaded']} pictures) and search ({found['loaded']}) work, analytics too; "
                f"the key is in sessionStorage only; a new tab asks again")

    # ---------------------------------------------------------------- detected objects (issue 38)

    def make_scene(self):
        """Three catalog stamps on a white 900×600 canvas, drawn by the browser (no image library needed): the same
        pixels on every run of this Chromium, so the detector's answer is the same every time."""
        if self.scene:
            return self.scene
        self.open("/")
        data = self.driver.execute_async_script(SCENE_JS, SCENE_STAMPS)
        check(isinstance(data, str) and data.startswith("data:image/png;base64,"), f"the scene was not drawn: {str(data)[:200]}")
        import base64
        path = os.path.join(self.work, "scene.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(data.split(",", 1)[1]))
        self.scene = path
        return path

    def upload_scene(self):
        """Uploads the scene and waits for its results and its objects (#objects-layer[data-state=ready|off])."""
        d = self.driver
        path = self.make_scene()
        before = wait_results(d, what="the page before the upload")
        by_id(d, "upload-input").send_keys(path)
        now = wait_results(d, before, min_loaded=3, timeout=60, what="the upload search of the scene")
        check(one(d.current_url, "q") == "upload" and one(d.current_url, "im_id"), f"the URL is not q=upload&im_id=…: {d.current_url}")
        found = wait_for(d, "#objects-layer[data-state=ready|off] after the upload",
                         lambda d: (lambda o: o if o and o["state"] in ("ready", "off", "error") else False)(objects_on_picture(d)),
                         timeout=60, last=objects_on_picture)
        check(found["state"] != "error", f"the objects could not be found: {found['note']!r} {found['error']!r}")
        return now, found

    def discover_api(self, im_id, base=None):
        """The server's own answer for the uploaded picture (what the page shows must be this)."""
        response = http((base or self.base) + "/discoversearch?" + urllib.parse.urlencode({"im_id": im_id, "result_limit": 8, "score": "true"}))
        check(response.status == 200, f"GET /discoversearch?im_id={im_id}: {response.status} {response.body[:300]!r}")
        return response.json()

    def check_objects(self):
        """An uploaded photo shows a labelled box for every object /discoversearch detects in it."""
        d = self.driver
        self.open("/")
        _, found = self.upload_scene()
        check(found["state"] == "ready", f"#objects-layer[data-state={found['state']}] on a server with the detector "
              f"(note {found['note']!r}); expected ready")
        answer = self.discover_api(one(d.current_url, "im_id"))
        expected = [o for o in answer.get("objects", []) if o.get("type") not in ("image", "box", "point")]
        boxes = found["boxes"]
        # The detector's exact output is its own business (the engine's tests pin it): here at least two of the three
        # stamps must be found, and the page must draw exactly what the server answered.
        check(len(expected) >= 2, f"the detector found {len(expected)} objects in three stamps on white: "
              f"{[(o.get('type'), o.get('box')) for o in answer.get('objects', [])]}")
        check(len(boxes) == len(expected), f"{len(boxes)} .object-box on the picture, the server detected {len(expected)}: "
              f"{[(o['type'], o['box']) for o in expected]}")
        check(found["count"] == str(len(expected)), f"#objects-layer[data-count={found['count']}], expected {len(expected)}")
        image = wait_for(d, "#query-image to load", lambda d: query_image_rect(d))
        nw, nh = image["nw"], image["nh"]
        for shown, wanted in zip(boxes, expected):
            label = f"{wanted['type']} {wanted['score']:.2f}"
            check(shown["type"] == wanted["type"] and shown["box"] == [round(v) for v in wanted["box"]],
                  f"box {shown['type']} {shown['box']} on the page, the server says {wanted['type']} {wanted['box']} (order kept)")
            check(shown["label"].strip() == label, f"the box's label says {shown['label']!r}, expected {label!r}")
            check(re.fullmatch(r"\S.* [01]\.\d\d", shown["label"].strip()), f"label {shown['label']!r} is not 'type 0.82'")
            x1, y1, x2, y2 = shown["box"]
            check(0 <= x1 < x2 <= nw and 0 <= y1 < y2 <= nh, f"box {shown['box']} is not inside the {nw}×{nh} picture")
            check(shown["visible"], f"the {shown['type']} box is not visible")
            check(shown["tag"] == "BUTTON" and shown["tabindex"] >= 0, f"the {shown['type']} box is a {shown['tag']} (tabindex {shown['tabindex']}), not a focusable button")
            check(shown["type"] in shown["name"], f"the {shown['type']} box's accessible name {shown['name']!r} does not name it")
            drawn = (image["x"] + x1 / nw * image["w"], image["y"] + y1 / nh * image["h"], (x2 - x1) / nw * image["w"], (y2 - y1) / nh * image["h"])
            r = shown["rect"]
            check(abs(r["x"] - drawn[0]) <= 3 and abs(r["y"] - drawn[1]) <= 3 and abs(r["w"] - drawn[2]) <= 4 and abs(r["h"] - drawn[3]) <= 4,
                  f"the {shown['type']} box is drawn at {r}, its pixels {shown['box']} of {nw}×{nh} map to "
                  + ",".join(f"{v:.0f}" for v in drawn))
            check(shown["pressed"] == "false", f"the {shown['type']} box is marked selected before any was clicked")
        check(found["note"] and "found" in found["note"], f"#objects-note says {found['note']!r}")
        check(found["toggle"] and "Find every product" in found["toggle"], f"#objects-toggle shows {found['toggle']!r}")
        check(not found["error"], f"#error shows {found['error']!r}")
        self.objects_url = d.current_url
        self.objects_expected = expected
        d.execute_script("document.querySelector('#query-view').scrollIntoView({block: 'start'})")
        return (f"{len(boxes)} boxes drawn where the server's boxes are ({nw}×{nh} picture), labels "
                + ", ".join(repr(b['label']) for b in boxes) + f"; note {found['note']!r}")

    def check_object_click(self):
        """Clicking a detected object's box searches that box (the request has it) and marks the box selected;
        Enter on another box does the same from the keyboard."""
        d = self.driver
        if self.objects_url is None:
            self.open("/")
            self.upload_scene()
        elif d.current_url != self.objects_url:
            self.open(self.objects_url)
        before = wait_results(d, what="the upload search before clicking an object")
        found = wait_for(d, "the object boxes", lambda d: (lambda o: o if o and o["state"] == "ready" and o["boxes"] else False)(objects_on_picture(d)),
                         last=objects_on_picture)
        target = found["boxes"][-1]
        d.execute_script("performance.clearResourceTimings()")
        element = d.execute_script("return [...document.querySelectorAll('#objects-layer .object-box')].find(b => b.dataset.box === arguments[0])",
                                   ",".join(str(v) for v in target["box"]))
        check(element is not None, f"no .object-box[data-box={target['box']}]")
        ActionChains(d).move_to_element(element).click().perform()  # a real mouse click at its centre
        wait_for(d, "box= in the URL after the click", lambda d: one(d.current_url, "box"), last=lambda d: d.current_url)
        now = wait_results(d, before, min_loaded=3, what=f"the search of the {target['type']}")
        check(parse_box(d.current_url) == [float(v) for v in target["box"]], f"the URL's box={one(d.current_url, 'box')}, the object's box is {target['box']}")
        sent = [one(u, "box") for u in requests_to(d, "/uploadsearch")]
        check(",".join(str(v) for v in target["box"]) in sent, f"the page's /uploadsearch requests sent box= {sent}, expected {target['box']}")
        after = objects_on_picture(d)
        pressed = [b["type"] for b in after["boxes"] if b["pressed"] == "true"]
        check(len(after["boxes"]) == len(found["boxes"]), f"{len(after['boxes'])} boxes after the click, {len(found['boxes'])} before")
        check([b["box"] for b in after["boxes"] if b["pressed"] == "true"] == [target["box"]], f"selected after the click: {pressed}, expected the {target['type']}")
        check(now["names"] == self.same_query_from_api(d.current_url), "the page's results differ from the API's for the same box")
        first = now["names"][:4]
        self.shot("clicked")
        # The keyboard: Tab reaches the boxes (buttons, in the server's order), Enter searches the focused one.
        info, tabs = tab_until(d, lambda a: "object-box" in (a.get("cls") or ""))
        focused_box = d.execute_script("return document.activeElement.dataset.box || ''")
        other = next((b for b in found["boxes"] if ",".join(map(str, b["box"])) == focused_box), None)
        check(other is not None, f"Tab reached an object box {focused_box!r} that is not one of {[b['box'] for b in found['boxes']]}")
        check(other is found["boxes"][0], f"Tab reached the {other['type']} first, not the best object ({found['boxes'][0]['type']})")
        press(d, Keys.ENTER)
        wait_for(d, f"box={other['box']} in the URL after Enter", lambda d: one(d.current_url, "box") == ",".join(str(v) for v in other["box"]),
                 last=lambda d: d.current_url)
        keyed = wait_results(d, now, min_loaded=3, what=f"the search of the {other['type']} (Enter)")
        marked = [b["box"] for b in objects_on_picture(d)["boxes"] if b["pressed"] == "true"]
        check(marked == [other["box"]], f"selected after Enter: {marked}, expected {other['box']}")
        # Drawing still searches the drawn box, over an object or not.
        image = wait_for(d, "#query-image to load", lambda d: query_image_rect(d))
        picture = by_id(d, "query-image")
        offset = d.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top];", picture)
        start = (image["x"] - offset[0] + 0.05 * image["w"], image["y"] - offset[1] + 0.05 * image["h"])
        end = (image["x"] - offset[0] + 0.6 * image["w"], image["y"] - offset[1] + 0.7 * image["h"])
        drag(d, picture, start, end)
        wait_for(d, "a drawn box= in the URL", lambda d: one(d.current_url, "box") not in (None, ",".join(str(v) for v in other["box"])),
                 last=lambda d: d.current_url)
        drawn = wait_results(d, keyed, what="the search of a drawn box")
        x1, y1, x2, y2 = parse_box(d.current_url)
        check(abs(x1 - 0.05 * image["nw"]) < 12 and abs(x2 - 0.6 * image["nw"]) < 12, f"the drawn box is {x1:g},{y1:g},{x2:g},{y2:g}")
        check(not [b for b in objects_on_picture(d)["boxes"] if b["pressed"] == "true"], "an object is still marked selected after drawing another box")
        return (f"click on the {target['type']} → /uploadsearch box={','.join(map(str, target['box']))}, marked selected, "
                f"results {first}; Tab ×{tabs} reached the {other['type']}, Enter searched its box; a drawn box still searches "
                f"({len(drawn['names'])} results)")

    def check_every_product(self):
        """"Find every product": one row per detected object with its type, score, crop and its own results."""
        d = self.driver
        # A fresh upload: after a reload the tab no longer has the photo to draw the boxes on (the server keeps it).
        self.open("/")
        self.upload_scene()
        found = wait_for(d, "the object boxes", lambda d: (lambda o: o if o and o["state"] == "ready" and o["boxes"] else False)(objects_on_picture(d)),
                         last=objects_on_picture)
        toggle = by_id(d, "objects-toggle")
        check(toggle.get_attribute("aria-pressed") == "false", "#objects-toggle is pressed before it was clicked")
        click(d, toggle)
        wait_for(d, "view=objects in the URL", lambda d: one(d.current_url, "view") == "objects", last=lambda d: d.current_url)
        view = wait_for(d, "#objects[data-state=ready] with result pictures loaded in every row",
                        lambda d: (lambda v: v if v and v["shown"] and v["state"] == "ready" and v["rows"]
                                   and all(r["loaded"] >= min(2, len(r["names"])) for r in v["rows"]) else False)(object_rows(d)),
                        last=object_rows)
        check(by_id(d, "objects-toggle").get_attribute("aria-pressed") == "true", "#objects-toggle is not pressed in the objects view")
        check(not view["resultsShown"], "#results is still shown beside the objects view")
        rows = view["rows"]
        check(len(rows) == len(found["boxes"]), f"{len(rows)} rows, {len(found['boxes'])} objects on the picture")
        answer = self.discover_api(one(d.current_url, "im_id"))
        expected = [o for o in answer.get("objects", []) if o.get("type") not in ("image", "box", "point")]
        check(len(rows) == len(expected), f"{len(rows)} rows, the server detected {len(expected)}")
        for row, wanted in zip(rows, expected):
            check(row["type"] == wanted["type"] and row["box"] == wanted["box"], f"row {row['type']} {row['box']}, the server: {wanted['type']} {wanted['box']}")
            check(wanted["type"] in row["title"] and f"{wanted['score']:.2f}" in row["title"], f"the row's title says {row['title']!r}")
            names = [r["im_name"] for r in wanted.get("result", [])]
            check(row["names"] == names, f"the {row['type']} row shows {row['names']}, the server's results for it are {names}")
            check(len(row["names"]) >= 1, f"the {row['type']} row has no results")
            check(row["crop"] and row["crop"][0] > 0 and row["crop"][1] > 0, f"the {row['type']} row has no crop of the photo")
        # The stamps are catalog images: each found object's own picture should be among its results.
        own = sum(1 for r in rows if set(r["names"][:3]) & set(SCENE_STAMPS))
        d.execute_script("document.querySelector('#objects').scrollIntoView({block: 'start'})")  # the rows (objects.png shows the boxes)
        self.shot("view")
        # At phone width the view fits the screen: rows of cards scroll sideways inside themselves, the page does not.
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": True})
        try:
            wait_for(d, "the layout at 375 px", lambda d: d.execute_script("return innerWidth") == 375)
            o = d.execute_script(OVERFLOW_JS)
            check(o["scroll"] <= o["inner"], f"the objects view at 375 px: scrollWidth {o['scroll']} > innerWidth {o['inner']}; too wide: {o['wide']}")
            d.execute_script("document.querySelector('#objects').scrollIntoView({block: 'start'})")
            self.shot("phone")
        finally:
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            d.set_window_size(*WINDOW)
        # view=objects is page state: a reload shows the same rows (the server still has the photo by its im_id; the
        # tab no longer has it to cut crops from or draw boxes on).
        d.refresh()
        again = wait_for(d, "#objects[data-state=ready] after a reload", lambda d: (lambda v: v if v and v["shown"] and v["state"] == "ready" and v["rows"] else False)(object_rows(d)),
                         last=object_rows)
        check([(r["type"], r["box"], r["names"]) for r in again["rows"]] == [(r["type"], r["box"], r["names"]) for r in rows],
              f"after a reload the rows are {[(r['type'], r['box']) for r in again['rows']]}, before {[(r['type'], r['box']) for r in rows]}")
        check(by_id(d, "objects-toggle").get_attribute("aria-pressed") == "true", "#objects-toggle is not pressed after the reload")
        # A row's "Search this object" goes back to the results, searching that box.
        first = rows[0]
        button = d.execute_script("return document.querySelector('#objects .object-row .object-search')")
        check(button is not None, "no .object-search button in the first row")
        before = results(d)
        click(d, button)
        wait_for(d, "the results view with the row's box", lambda d: one(d.current_url, "box") == ",".join(map(str, first["box"])) and one(d.current_url, "view") is None,
                 last=lambda d: d.current_url)
        wait_results(d, before, min_loaded=1, what="the search of the row's object")
        check(not object_rows(d)["shown"], "the objects view is still shown after 'Search this object'")
        return (f"{len(rows)} rows (" + ", ".join(f"{r['type']}: {len(r['names'])} results" for r in rows)
                + f") as the server answered; {own} of {len(rows)} rows have a stamp of the scene in their first 3; "
                "no sideways scroll at 375 px; the same rows after a reload; 'Search this object' → the results of its box")

    def check_objects_off(self):
        """A server without the detection model: no boxes, nothing alarming, a quiet note."""
        d = self.driver
        empty = os.path.join(self.work, "no-model")
        os.makedirs(empty, exist_ok=True)
        catalog = os.path.join(self.work, "no-model.sqlite")
        saved = os.environ.get("VSEARCH_MODEL_DIR")
        os.environ["VSEARCH_MODEL_DIR"] = empty  # the index and the server inherit it: no learned model, no detector
        try:
            index(self.binary, os.path.join(self.corpus, "images"), os.path.join(self.corpus, "catalog.csv"), catalog)
            server = self.serve(catalog, "no-model")
        finally:
            if saved is None:
                os.environ.pop("VSEARCH_MODEL_DIR", None)
            else:
                os.environ["VSEARCH_MODEL_DIR"] = saved
        try:
            self.make_scene()
            self.open("/", server.base)
            d.execute_script("performance.clearResourceTimings()")
            now, found = self.upload_scene()
            answer = self.discover_api(one(d.current_url, "im_id"), server.base)
            check(answer.get("offline_note") or all(o.get("type") == "image" for o in answer.get("objects", [])),
                  f"the server without the model detected objects: {answer.get('objects')}")
            check(requests_to(d, "/discoversearch"), "the page asked /discoversearch nothing")
            check(found["state"] == "off", f"#objects-layer[data-state={found['state']}], expected off")
            check(not found["boxes"], f"{len(found['boxes'])} object boxes drawn without detection: {[b['type'] for b in found['boxes']]}")
            check(found["hidden"], "#objects-layer is shown without objects")
            check(found["note"] == "Object detection is off on this server.", f"#objects-note says {found['note']!r}")
            check(not found["error"], f"#error shows {found['error']!r}")
            check(found["toggle"] is None, f"#objects-toggle is shown ({found['toggle']!r}) with nothing detected")
            check(len(now["names"]) >= 3, f"only {len(now['names'])} results without detection")
            d.execute_script("document.querySelector('#query-view').scrollIntoView({block: 'start'})")
        finally:
            self.stop_server(server)
        return f"no boxes, no error, no toggle; note {found['note']!r}; {len(now['names'])} results as usual"

    def check_console(self):
        """No SEVERE console entry from our pages, other than the ones a step expects (e.g. 401 for a wrong key)."""
        entries = self.browser.console if self.browser else []
        origins = [s.base for s in self.servers if s.base]
        bad, expected = [], 0
        for step, entry in entries:
            if entry.get("level") != "SEVERE":
                continue
            message = entry.get("message", "")
            if "favicon.ico" in message:
                continue
            ours = any(o in message for o in origins) or not re.search(r"https?://", message)
            if not ours:
                continue
            if any(p.search(message) for p in self.allowed.get(step, [])):
                expected += 1
                continue
            bad.append(f"[{step}] {message[:300]}")
        check(not bad, f"{len(bad)} console errors: " + " | ".join(bad[:8]))
        return f"{len(entries)} console entries, no unexpected SEVERE one ({expected} expected: refused keys, bad queries)"


def main():
    # SIGTERM (a test harness giving up) ends the run through its finally blocks: servers and browser stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vsearch", required=True, help="the vsearch binary")
    parser.add_argument("--corpus", required=True, help="the corpus folder (images/ and catalog.csv)")
    parser.add_argument("--screenshots", required=True, help="where NN-step.png go")
    parser.add_argument("--json", help="the result file")
    parser.add_argument("--only", help="comma-separated step names to run (debugging)")
    parser.add_argument("--web-root", help="serve the page's files from this folder (vsearch serve --web-root)")
    return PageTest(parser.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
