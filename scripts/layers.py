#!/usr/bin/env python3
# (A copy of the project's shared tool ../shared/tools/layers.py, kept here so that a fresh clone runs it.)
"""Check that a Rust crate's top-level modules import only downward.

usage: layers.py SRC_DIR LAYER [LAYER ...]

Each LAYER is a comma-separated set of top-level modules of the crate (the folders or files
directly under SRC_DIR), listed from the top (the C ABI) to the bottom (shared types). A module
may use its own layer's code and any layer below it; modules of one layer may not use each
other. Every `crate::<module>` path in a file under SRC_DIR/<module> counts (use lines and
inline paths alike; comments and strings are skipped). Modules not named in any layer are
reported, so a new module must be placed.

Prints each upward or sideways use as `FILE:LINE: <from> uses <to> (<path>)`, then a summary line;
exits 1 if there is any, 0 otherwise.

example: layers.py src abi plan gpu cpu config,types
"""
import re
import sys
from pathlib import Path


def strip(line, state):
    """Drop comments and string contents from one line; state carries /* */ across lines."""
    out, i, n = [], 0, len(line)
    while i < n:
        if state["block"]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state["block"], i = False, j + 2
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"], i = True, i + 2
            continue
        if c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append('""')
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    src = Path(argv[1])
    rank = {}
    for r, layer in enumerate(argv[2:]):
        for m in layer.split(","):
            rank[m.strip()] = r
    tops = {p.stem if p.is_file() else p.name for p in src.iterdir()
            if (p.is_dir() or p.suffix == ".rs") and p.stem not in ("lib", "main", "bin")}
    unplaced = sorted(tops - set(rank))
    bad = 0
    pat = re.compile(r"\bcrate::(\w+)")
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        if rel.parts[0] == "bin" or rel.name in ("lib.rs", "main.rs") and len(rel.parts) == 1:
            continue
        me = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if me not in rank:
            continue
        state = {"block": False}
        for no, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for m in pat.finditer(strip(line, state)):
                to = m.group(1)
                if to == me or to not in rank:
                    continue
                if rank[to] <= rank[me]:
                    kind = "sideways" if rank[to] == rank[me] else "upward"
                    print(f"{src / rel}:{no}: {me} uses {to} ({kind}: {line.strip()[:100]})")
                    bad += 1
    for m in unplaced:
        print(f"{src}/{m}: module not placed in any layer")
    print(f"layers: {bad} upward or sideways uses, {len(unplaced)} unplaced modules")
    return 1 if bad or unplaced else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
