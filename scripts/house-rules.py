#!/usr/bin/env python3
"""The house rules of issue 41 that a search of the tree can show (docs/architecture.md,
"House rules"). CI runs it beside scripts/architecture.py --check; each rule prints the
places that break it, and the script exits 1 when any does.

    python3 scripts/house-rules.py          # check every rule
    python3 scripts/house-rules.py --list   # the rules, one line each

Swift code is read with comments and string literals left out (a message may say
"colour"; an identifier may not), interpolations kept as code.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def code_spans(src):
    """The (start, end) of the code in `src`: no comments, no string literal text; interpolations are code."""
    i, n = 0, len(src)
    spans = []
    start = 0
    stack = []  # for interpolation: track paren depth
    def push_code(a, b):
        if b > a: spans.append((a, b))
    mode = 'code'
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            push_code(start, i)
            j = src.find('\n', i); j = n if j < 0 else j
            i = j; start = i; continue
        if src.startswith('/*', i):
            push_code(start, i)
            depth = 1; i += 2
            while i < n and depth:
                if src.startswith('/*', i): depth += 1; i += 2
                elif src.startswith('*/', i): depth -= 1; i += 2
                else: i += 1
            start = i; continue
        if c == '"' or (c == '#' and re.match(r'#+"', src[i:])):
            push_code(start, i)
            hashes = 0
            while src[i] == '#': hashes += 1; i += 1
            triple = src.startswith('"""', i)
            quote = '"""' if triple else '"'
            i += len(quote)
            close = quote + '#' * hashes
            interp = '\\' + '#' * hashes + '('
            while i < n:
                if src.startswith(close, i): i += len(close); break
                if src.startswith(interp, i):
                    i += len(interp); depth = 1; a = i
                    # scan interpolation code, handling nested strings crudely
                    while i < n and depth:
                        if src[i] == '(': depth += 1
                        elif src[i] == ')': depth -= 1
                        elif src[i] == '"':
                            j = src.find('"', i + 1); i = j
                        i += 1
                    spans.append((a, i - 1)); continue
                if hashes == 0 and src[i] == '\\': i += 2; continue
                i += 1
            start = i; continue
        i += 1
    push_code(start, n)
    return spans


def swift_files(*roots):
    listed = subprocess.check_output(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *roots],
                                     cwd=ROOT, text=True).split()
    return sorted({path for path in listed if path.endswith(".swift") and (ROOT / path).is_file()})


def code_matches(pattern, roots, allowed=()):
    """Each `path:line: text` where `pattern` matches code (not comments or strings) outside `allowed` paths."""
    found = []
    for path in swift_files(*roots):
        if any(path.startswith(prefix) for prefix in allowed):
            continue
        src = (ROOT / path).read_text()
        for a, b in code_spans(src):
            for match in re.finditer(pattern, src[a:b]):
                line = src.count("\n", 0, a + match.start()) + 1
                found.append(f"{path}:{line}: {src.splitlines()[line - 1].strip()}")
    return found


def targets_without_tests():
    """Each Swift target of Sources/ without a Tests/<Target>Tests/ holding a Swift file (C modules have no tests of their own)."""
    missing = []
    for target in sorted(path.name for path in (ROOT / "Sources").iterdir() if path.is_dir()):
        if not swift_files(f"Sources/{target}"):
            continue
        if not swift_files(f"Tests/{target}Tests"):
            missing.append(f"Sources/{target}: no Tests/{target}Tests")
    return missing


def package_dependencies_of(target, forbidden):
    """Each of `forbidden` that Package.swift lists among `target`'s dependencies (read from the manifest's text)."""
    manifest = (ROOT / "Package.swift").read_text()
    match = re.search(r'\.testTarget\(\s*name:\s*"' + re.escape(target) + r'"(.*?)\n\s*\)', manifest, re.S)
    if not match:
        return [f"Package.swift: no test target {target}"]
    deps = re.search(r"dependencies:\s*\[(.*?)\]", match.group(1), re.S)
    listed = set(re.findall(r'"(\w+)"', deps.group(1) if deps else ""))
    return [f"Package.swift: {target} depends on {name}" for name in forbidden if name in listed]


RULES = [
    ("one composition root: an engine is built from a store only in Sources/CatalogStores",
     lambda: code_matches(r"\bVisualSearchEngine\(\s*(catalog|store):", ["Sources"], allowed=["Sources/CatalogStores/"])
     + code_matches(r"\bself\.init\(\s*catalog:", ["Sources"], allowed=["Sources/CatalogStores/", "Sources/SearchEngine/"])),
    ("one model identity: EmbeddingDescriptor.makesSameVectors(as:) is the only comparison of models",
     lambda: code_matches(r"contentHash\s*[!=]=|[!=]=\s*\w+(\??\.\w+)*\.contentHash\b|learnedModel\(\)\s*[!=]=\s*\w+\.descriptor",
                          ["Sources"], allowed=["Sources/SearchEngine/Embedding/ImageEmbedder.swift"])),
    ("one lock: Locked (a pthread mutex ThreadSanitizer sees), never Synchronization.Mutex",
     lambda: code_matches(r"\bMutex\s*[<(]", ["Sources", "Tests"])),
    ("one spelling: `color` in identifiers (prose and the CLI's `colour` alias may keep `colour`)",
     lambda: code_matches(r"\b\w*(olour|OLOUR)\w*\b", ["Sources", "Tests"])
     + [f"{path}: file name" for path in swift_files("Sources", "Tests") if "olour" in path]),
    ("lifetimes owned by scopes: no store starts a task it does not await (a PostgreSQL pool runs in the scope that opened it), "
     "and the engine starts none of its own (its inserts run in its owner's scope: runInserts)",
     lambda: code_matches(r"\bTask\s*(\{|\(\s*(priority:[^)]*)?\)\s*\{)", ["Sources/SQLiteCatalog", "Sources/PostgreSQLCatalog", "Sources/CatalogStores"])
     + code_matches(r"\bTask\s*(\.\s*detached\b|\{|\(\s*(priority:[^)]*)?\)\s*\{)", ["Sources/SearchEngine"])),
    ("no polling waits in tests: a test waits on the event (Observed.until, the clock's sleepers, the sockets), never `eventually` or a `waitUntil` poll",
     lambda: code_matches(r"\b(eventually|waitUntil)\s*(\(|\{)", ["Tests"])),
    ("tests mirror targets: every Swift target has its own test target (each store's runs the role contracts)",
     targets_without_tests),
    ("the engine's own tests run on the in-memory store: SearchEngineTests import no store and open no database",
     lambda: code_matches(r"\bimport\s+(SQLiteCatalog|PostgreSQLCatalog|CatalogStores)\b"
                          r"|\bCorpus\.(engine|learnedEngine|makeCatalog|sharedCatalog|makeLearnedCatalog|sharedLearnedCatalog)\b"
                          r"|\b(StoreFactory|LocationFactory|CatalogLocation)\b", ["Tests/SearchEngineTests"])
     + package_dependencies_of("SearchEngineTests", forbidden=("SQLiteCatalog", "PostgreSQLCatalog", "CatalogStores"))),
    ("errors per layer: the stores throw CatalogStoreError, never the client's VisualSearchError (the engine maps it, in one place)",
     lambda: [place for place in code_matches(r"\bthrows\(\s*VisualSearchError\s*\)|\bVisualSearchError\s*\.|\bas\??\s+VisualSearchError\b",
                                              ["Sources/SQLiteCatalog", "Sources/PostgreSQLCatalog", "Sources/SearchEngine/Storage"],
                                              allowed=["Sources/SearchEngine/Storage/CatalogStoreError.swift"])
              if "checkingInput" not in place]),  # a check of the request's words, its refusal mapped by checkingInput
    ("one way off the cooperative pool: every thread starts in OwnThread (ConcurrencyToolkit), no Dispatch queue, no thread of its own"
     " (in the tests too, whose values must reach a task through its Handoff for ThreadSanitizer to see them; only the"
     " toolkit's own tests race its primitives on Dispatch's threads)",
     lambda: code_matches(r"\bThread\s*(\{|\()|\bdetachNewThread\b|\bDispatchQueue\b|\bpthread_create\b",
                          ["Sources", "Tests"], allowed=["Sources/ConcurrencyToolkit/OwnThread.swift", "Tests/ConcurrencyToolkitTests/"])),
    ("one feature pipeline: in the engine an image is decoded only by FeaturePipeline, and colour-described only through its ColorEmbedder",
     lambda: code_matches(r"\bImageDecoder\s*\.\s*(decode|readHeader)\b", ["Sources/SearchEngine"],
                          allowed=["Sources/SearchEngine/Features/FeaturePipeline.swift"])
     + code_matches(r"\bColorFeatures\s*\.\s*vector\b", ["Sources"],
                    allowed=["Sources/SearchEngine/Embedding/ColorEmbedder.swift", "Sources/SearchEngine/Features/ColorFeatures.swift"])),
]


def main():
    if "--list" in sys.argv[1:]:
        for name, _ in RULES:
            print(name)
        return 0
    failed = 0
    for name, check in RULES:
        broken = check()
        print(("ok    " if not broken else "FAIL  ") + name)
        for place in broken:
            print("      " + place)
        failed += bool(broken)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
