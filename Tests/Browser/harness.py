"""The machinery of the browser tests (page_test.py): `vsearch` processes, headless Chromium, waits, HTTP.

Nothing here knows the page; page_test.py holds the checks. Plain Python 3 and selenium, nothing else.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1280, 900)

# Generous: the machine has 2 shared cores, and in CI the rest of the test suite runs at the same time.
TIMEOUT = 45


class Failure(Exception):
    """A check failed; the message says what was expected and what was seen."""


def check(condition, message):
    if not condition:
        raise Failure(message)


# ------------------------------------------------------------------------------------------------ processes


class Server:
    """`vsearch serve --port 0` on a catalog; knows its base URL once it listens."""

    def __init__(self, binary, catalog, workdir, name, extra=()):
        self.binary, self.catalog, self.name = binary, catalog, name
        self.log_path = os.path.join(workdir, f"serve-{name}.log")
        self.extra = list(extra)
        self.process = None
        self.base = None

    def start(self, timeout=60):
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--catalog", self.catalog, "--port", "0", *self.extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.log())
            if match:
                self.base = match.group(1)
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)  # polling a log file: there is nothing to wait on
        raise Failure(f"vsearch serve ({self.name}) did not start: {self.log()[-2000:]}")

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        if self.process is not None:
            self._log.close()
        self.process = None


def run(command, timeout=120):
    """Runs a command; returns (status, stdout, stderr)."""
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def index(binary, images, metadata, catalog, extra=()):
    status, _, err = run([binary, "index", images, "--metadata", metadata, "--catalog", catalog, "--quiet", *extra],
                         timeout=300)
    if status != 0:
        raise Failure(f"vsearch index {images} failed ({status}): {err[-2000:]}")


def descendants(pid):
    """Every process below pid, from /proc (chromedriver → chromium → its helpers)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


# ------------------------------------------------------------------------------------------------ browser


class Browser:
    """Headless Debian Chromium through Debian's chromedriver, with the console log kept."""

    def __init__(self, workdir):
        self.profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={self.profile}",
                         "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                         "--disable-background-networking", "--disable-sync", "--hide-scrollbars",
                         "--lang=en-US"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # Paths given: Selenium Manager has nothing to look up or download (and must not: no network).
        os.environ.setdefault("SE_OFFLINE", "true")
        self.service = Service(CHROMEDRIVER, log_output=os.path.join(workdir, "chromedriver.log"))
        self.driver = webdriver.Chrome(service=self.service, options=options)
        self.driver.set_page_load_timeout(TIMEOUT)
        self.driver.set_script_timeout(TIMEOUT)
        self.pids = [self.service.process.pid]
        self.version = self.driver.capabilities.get("browserVersion", "?")
        # Every page records Content-Security-Policy violations (the page's own CSP would block a script of ours
        # in the page; one added over DevTools runs before the page, outside it).
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.__csp = [];
            document.addEventListener('securitypolicyviolation', e => window.__csp.push(
                e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber), true);
        """})
        self.console = []  # (step, entry)

    def collect_console(self, step):
        try:
            for entry in self.driver.get_log("browser"):
                self.console.append((step, entry))
        except WebDriverException:
            pass

    def quit(self):
        leftovers = []
        for pid in self.pids:
            leftovers += descendants(pid)
        try:
            self.driver.quit()
        except Exception:
            pass
        for pid in [*self.pids, *leftovers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.service.process.wait(timeout=10)
        except Exception:
            pass
        shutil.rmtree(self.profile, ignore_errors=True)


def wait_for(driver, description, condition, timeout=TIMEOUT, last=None):
    """Waits until condition(driver) is truthy and returns it; on timeout fails naming what was awaited and,
    when last is given, what last(driver) shows then."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: condition(d))
    except TimeoutException:
        seen = ""
        if last is not None:
            try:
                seen = f"; seen: {last(driver)}"
            except Exception as error:  # the page may be gone
                seen = f"; seen: ({error.__class__.__name__})"
        raise Failure(f"timed out after {timeout} s waiting for {description}{seen}") from None


def wait_until(description, condition, timeout=TIMEOUT, interval=0.25):
    """The same, for conditions outside the browser (a command's output)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise Failure(f"timed out after {timeout} s waiting for {description}")
        time.sleep(interval)  # the condition is another process's state: poll it


# ------------------------------------------------------------------------------------------------ HTTP


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        return json.loads(self.body.decode("utf-8"))


def http(url, method="GET", headers=None, data=None, timeout=60):
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            return Response(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def query_of(url):
    """The URL's query as a dict of lists."""
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query, keep_blank_values=True)


def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker, or None."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    return None
