#!/usr/bin/env python3
"""Check that the seed rows of docs/results/README.md quote figures their run files hold.

For every row of the seeds' table (a row that begins `| 00N |`), the files it names (a
`YYYY-MM-DD/NAME` reference, or a run's bare name in backticks) are read, CSV and text alike,
and every decimal figure of the row's "ours" column must either round from a number in those
files or be listed, with its computation, in docs/results/derived-figures.txt. A figure in
the wrong file, a typo or a number left from an earlier run fails the check.

What it cannot see: a decimal that happens to round from an unrelated number of the same
files (short figures such as 7.3 in a file of thousands of numbers), integers, and whether
the figure is quoted for the right cell. It is a net for slips, not a proof.
"""

import bisect
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "results")
DECIMAL = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def run_index():
    """Run name (bare, and with its day folder) -> the paths on record under that name."""
    runs = {}
    for day in sorted(os.listdir(ROOT)):
        if not re.fullmatch(r"20\d\d-\d\d-\d\d", day):
            continue
        for entry in os.listdir(os.path.join(ROOT, day)):
            name = re.sub(r"\.(txt|md|csv|json)$", "", entry)
            path = os.path.join(ROOT, day, entry)
            runs.setdefault(name, []).append(path)
            runs.setdefault(f"{day}/{name}", []).append(path)
    return runs


def numbers_in(paths):
    """Every number in the files (and the files of the folders) named, sorted."""
    values = set()
    for path in paths:
        files = [path]
        if os.path.isdir(path):
            files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if not f.endswith(".svg")]
        for f in files:
            with open(f, errors="replace") as handle:
                values.update(float(x) for x in NUMBER.findall(handle.read()))
    return sorted(values)


def rounds_from(quoted, values):
    """Whether some value rounds to `quoted` at its number of decimals."""
    half = 0.5 * 10 ** -len(quoted.split(".")[1]) + 1e-12
    target = float(quoted)
    i = bisect.bisect_left(values, target - half)
    return i < len(values) and values[i] <= target + half


def derived_figures():
    """(seed, figure prefix) -> the figures listed as computed."""
    listed = {}
    with open(os.path.join(ROOT, "derived-figures.txt")) as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                seed, figure, quoted, _how = [c.strip() for c in line.split("|", 3)]
                listed.setdefault((seed, figure), set()).add(quoted)
    return listed


def main():
    runs = run_index()
    listed = derived_figures()
    used = set()
    failures = 0
    checked = 0
    with open(os.path.join(ROOT, "README.md")) as handle:
        rows = [line for line in handle if re.match(r"\| 00\d \|", line)]
    for row in rows:
        cells = [c.strip() for c in row.split(" | ")]
        seed, figure, ours = cells[0].lstrip("| "), cells[1], cells[5] if len(cells) > 5 else ""
        names = set(re.findall(r"20\d\d-\d\d-\d\d/[A-Za-z0-9._-]+", row)) | set(re.findall(r"`([a-z0-9][a-z0-9.-]+)`", row))
        paths = [p for n in names for p in runs.get(re.sub(r"\.(txt|md)$", "", n.rstrip(".,")), [])]
        values = numbers_in(paths)
        computed = {q for (s, f), qs in listed.items() if s == seed and figure.startswith(f) for q in qs}
        for quoted in sorted(set(DECIMAL.findall(ours))):
            checked += 1
            if quoted in computed:
                used.update((seed, f, quoted) for (s, f) in listed if s == seed and figure.startswith(f))
            elif not rounds_from(quoted, values):
                print(f"seed {seed}, {figure}: {quoted} is in none of the files the row names", file=sys.stderr)
                failures += 1
    for (seed, figure), qs in listed.items():
        for quoted in qs:
            if (seed, figure, quoted) not in used:
                print(f"derived-figures.txt lists {quoted} for seed {seed}, {figure}: not quoted there", file=sys.stderr)
                failures += 1
    if failures:
        return 1
    print(f"check-quoted: {checked} figures of {len(rows)} seed rows are in their run files or derived-figures.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
