#!/usr/bin/env python3
"""Every Swift example in README.md, compiled — and run where it can run (issue 39, items 1 and 2).

What it does, from the repository's root (CI runs it after ./scripts/test.sh, whose release build it reuses):

1. Extracts the README's ```swift blocks. A block preceded by `<!-- readme-examples: skip (why) -->` is not
   this package's code (the ViSearch iOS SDK's) and is listed as skipped; the block that starts with
   `// Package.swift` is the light client's manifest fragment, whose `.package(...)` line becomes the
   consumer's dependency verbatim (its `../vsearch` path points at this checkout).
2. The client blocks (they import only VisualSearch, ImageOps, Networking, Tracking, EventDelivery, Foundation)
   become executable targets of a new consumer package that depends on this one by path with the README's
   `traits: []`. It must resolve no package (no Package.resolved with a pin), build in release, and link no
   WebP/HEIF/AVIF/GIF codec or SQLite (`ldd`).
3. Those examples run against a local `vsearch serve` on the corpus catalog (app key `dev`; the README's
   `http://127.0.0.1:8080` is replaced by the port the server took), in a folder holding `photo.jpg`.
4. The toolkit blocks (they import SearchEngine, a store or the server) are type-checked with `swiftc` against
   this checkout's release build — compiled, not linked: a second full build of the toolkit would cost CI
   ~15 minutes.

Prints the client's figures (packages resolved, download, clean build time, libraries linked) and ends with
"readme examples: … passed"; exits 1 on the first failure, naming the block and its README line.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT_MODULES = {"VisualSearch", "ImageOps", "Networking", "Tracking", "EventDelivery"}
SYSTEM_MODULES = {"Foundation", "FoundationEssentials", "Dispatch", "Glibc"}
# Libraries a light client must not link: the codecs behind traits and their encoders, and SQLite (GRDB's). TLS is
# Foundation's own (URLSession's libcurl), so it stays.
FORBIDDEN_LIBRARIES = re.compile(r"lib(heif|avif|webp|sharpyuv|gif|x265|de265|dav1d|aom|rav1e|SvtAv1|gav1|sqlite3)\b")


def fail(message):
    print(f"readme examples: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def blocks(readme):
    """(line number, kind, code) for every ```swift block; kind is skip, manifest, client or toolkit."""
    lines = readme.read_text().splitlines()
    found = []
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```swift":
            start = index + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            code = "\n".join(lines[start:end]) + "\n"
            previous = next((lines[j] for j in range(index - 1, -1, -1) if lines[j].strip()), "")
            if previous.strip().startswith("<!-- readme-examples: skip"):
                kind = "skip"
            elif code.lstrip().startswith("// Package.swift"):
                kind = "manifest"
            else:
                imports = set(re.findall(r"^import\s+(\w+)", code, re.M))
                unknown = imports - CLIENT_MODULES - SYSTEM_MODULES
                kind = "toolkit" if unknown else "client"
            found.append((start + 1, kind, code))
            index = end
        index += 1
    return found


def run(command, cwd=None, timeout=1800, env=None):
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    return result


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def directory_size(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file() and not f.is_symlink())


def client_package(work, manifest_line, examples):
    """Writes the consumer package: the README's dependency line, one executable per client block."""
    consumer = work / "consumer"
    targets = []
    for line, code in examples:
        name = f"ReadmeLine{line}"
        source = consumer / "Sources" / name
        source.mkdir(parents=True)
        (source / "main.swift").write_text(code)
        products = sorted(set(re.findall(r"^import\s+(\w+)", code, re.M)) & CLIENT_MODULES)
        dependencies = ", ".join(f'.product(name: "{p}", package: "vsearch")' for p in products)
        targets.append(f'        .executableTarget(name: "{name}", dependencies: [{dependencies}]),')
    (consumer / "Package.swift").write_text(
        "// swift-tools-version:6.1\n"
        "// Written by scripts/readme-examples.py: the README's client examples, depending on vsearch as the README shows.\n"
        "import PackageDescription\n\n"
        "let package = Package(\n"
        '    name: "ReadmeClient",\n'
        f"    dependencies: [\n        {manifest_line}\n    ],\n"
        "    targets: [\n" + "\n".join(targets) + "\n    ]\n)\n")
    return consumer


def start_server(work):
    binary = ROOT / ".build" / "release" / "vsearch"
    if not binary.exists():
        fail(f"{binary} is missing: run `swift build -c release` (or ./scripts/test.sh) first")
    catalog = work / "catalog.sqlite"
    indexed = run([str(binary), "index", "corpus/images", "--metadata", "corpus/catalog.csv", "--catalog", str(catalog)], cwd=ROOT)
    if indexed.returncode != 0:
        fail(f"vsearch index: {indexed.stderr.strip()[-2000:]}")
    port = free_port()
    log = open(work / "serve.log", "w")
    server = subprocess.Popen([str(binary), "serve", "--catalog", str(catalog), "--port", str(port), "--app-key", "dev"],
                              cwd=work, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return server, port
        except OSError:
            if server.poll() is not None:
                fail(f"vsearch serve exited: {(work / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.1)
    server.kill()
    fail("vsearch serve did not start in 30 s")


def typecheck_toolkit(line, code, work):
    """Type-checks a toolkit block against this checkout's release build (its modules and C module maps)."""
    modules = ROOT / ".build" / "release" / "Modules"
    if not (modules / "SearchEngine.swiftmodule").exists():
        built = run(["swift", "build", "-c", "release"], cwd=ROOT, timeout=5400)
        if built.returncode != 0:
            fail(f"swift build -c release: {built.stderr[-3000:]}")
    arguments = ["swiftc", "-typecheck", "-I", str(modules)]
    maps = [p for p in (ROOT / "Sources").rglob("module.modulemap")]
    maps += [p for p in (ROOT / ".build" / "checkouts").rglob("module.modulemap") if "/Tests/" not in str(p)]
    maps += list((ROOT / ".build" / "release").resolve().glob("*.build/module.modulemap"))
    for path in maps:
        arguments += ["-Xcc", f"-fmodule-map-file={path}"]
    for include in (ROOT / "Sources").glob("*/include"):
        arguments += ["-Xcc", f"-I{include}"]
    source = work / f"toolkit-{line}" / "main.swift"
    source.parent.mkdir()
    source.write_text(code)
    checked = run(arguments + [str(source)])
    if checked.returncode != 0:
        fail(f"README.md line {line} (toolkit example) does not compile:\n{checked.stderr.strip()[-4000:]}")


def main():
    readme = ROOT / "README.md"
    found = blocks(readme)
    manifests = [(line, code) for line, kind, code in found if kind == "manifest"]
    clients = [(line, code) for line, kind, code in found if kind == "client"]
    toolkits = [(line, code) for line, kind, code in found if kind == "toolkit"]
    skipped = [line for line, kind, _ in found if kind == "skip"]
    if len(manifests) != 1:
        fail(f"README.md should hold one `// Package.swift` block (the light client's dependency); found {len(manifests)}")
    manifest_line_number, manifest = manifests[0]
    dependency = re.search(r"^\s*(\.package\(path: \"\.\./vsearch\".*?\)),?\s*(//.*)?$", manifest, re.M)
    if not dependency:
        fail(f"README.md line {manifest_line_number}: no `.package(path: \"../vsearch\", traits: …)` line")
    if "traits: []" not in dependency.group(1):
        fail(f"README.md line {manifest_line_number}: the client's dependency should declare `traits: []`")

    work = Path(tempfile.mkdtemp(prefix="vsearch-readme-"))
    try:
        # The README's `../vsearch` resolves to this checkout whatever its folder is called.
        (work / "vsearch").symlink_to(ROOT)
        consumer = client_package(work, dependency.group(1), clients)

        started = time.monotonic()
        resolved = run(["swift", "package", "resolve"], cwd=consumer, timeout=600)
        if resolved.returncode != 0:
            fail(f"swift package resolve: {resolved.stderr.strip()[-3000:]}")
        pins = []
        if (consumer / "Package.resolved").exists():
            pins = json.loads((consumer / "Package.resolved").read_text()).get("pins", [])
        if pins:
            fail(f"the light client resolved {len(pins)} packages ({', '.join(p['identity'] for p in pins)}); it should resolve none")
        checkouts = consumer / ".build" / "checkouts"
        download = directory_size(checkouts) if checkouts.exists() else 0
        built = run(["swift", "build", "-c", "release"], cwd=consumer, timeout=3600)
        build_seconds = time.monotonic() - started
        if built.returncode != 0:
            fail(f"the client examples do not build:\n{(built.stdout + built.stderr).strip()[-6000:]}")

        libraries = set()
        for line, _ in clients:
            binary = consumer / ".build" / "release" / f"ReadmeLine{line}"
            linked = run(["ldd", str(binary)]).stdout
            names = {entry.split()[0] for entry in linked.splitlines() if entry.strip()}
            bad = sorted(n for n in names if FORBIDDEN_LIBRARIES.search(n))
            if bad:
                fail(f"README.md line {line}: the light client links {', '.join(bad)}")
            libraries |= names
        print(f"light client: {len(pins)} packages resolved, {download} bytes downloaded, "
              f"clean resolve + release build {build_seconds:.0f} s, {len(libraries)} libraries linked "
              f"(no WebP, HEIF, AVIF, GIF or SQLite library)")

        for line, code in toolkits:
            typecheck_toolkit(line, code, work)

        server, port = start_server(work)
        try:
            shutil.copy(ROOT / "corpus" / "images" / "chelsea_cat.jpg", work / "photo.jpg")
            for line, code in clients:
                binary = consumer / ".build" / "release" / f"ReadmeLine{line}"
                source = consumer / "Sources" / f"ReadmeLine{line}" / "main.swift"
                if "127.0.0.1:8080" in code:
                    # The README's address, pointed at the server this script started.
                    source.write_text(code.replace("127.0.0.1:8080", f"127.0.0.1:{port}"))
                    rebuilt = run(["swift", "build", "-c", "release", "--product", f"ReadmeLine{line}"], cwd=consumer)
                    if rebuilt.returncode != 0:
                        fail(f"README.md line {line}: {rebuilt.stderr[-3000:]}")
                ran = run([str(binary)], cwd=work, timeout=120)
                if ran.returncode != 0:
                    fail(f"README.md line {line} (client example) exited {ran.returncode}:\n{(ran.stdout + ran.stderr).strip()[-3000:]}")
                print(f"README.md line {line}: ran — {ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else '(no output)'}")
        finally:
            server.terminate()
            server.wait(timeout=30)

        print(f"readme examples: {len(clients)} client examples built with traits: [] and run against vsearch serve, "
              f"{len(toolkits)} toolkit example{'s' if len(toolkits) != 1 else ''} type-checked, "
              f"{len(skipped)} skipped (another SDK's code: README.md line {', '.join(map(str, skipped)) or '-'}) — passed")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
