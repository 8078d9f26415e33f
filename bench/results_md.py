"""bench/RESULTS.md: each benchmark owns one `## ` section and replaces only that one."""
import os


def replace_section(path, title, text):
    """Writes `text` (which starts with the `## title` line) in place of the section `title`,
    appending it when absent; other sections are kept as they are."""
    old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    lines = old.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == title), None)
    if start is None:
        new = old.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    else:
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
        rest = "".join(lines[end:])
        new = "".join(lines[:start]) + text.rstrip("\n") + "\n" + ("\n" + rest if rest else "")
    with open(path, "w") as f:
        f.write(new)
