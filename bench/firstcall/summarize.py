#!/usr/bin/env python3
"""Summarize first-call.csv (written by scripts/gpu-first-call.sh): a table on stdout and, when
matplotlib is importable and SVG is given, a plot.

    python3 bench/firstcall/summarize.py CSV [SVG]

CSV columns: round,program,side,cache,kind,first_ms,ready_s,ready_calls,ok
  side   cublas (plain run, no preload) | hyblas (LD_PRELOAD=libhyblas.so)
  cache  none (plain) | cold (fresh empty HYBLAS_CACHE_DIR) | warm (the same dir, filled by cold)
  ok     ok, or what went wrong (FAIL, timeout, notrace, missing, noready, exit<N>)
Rows with program=info: the wall time of `hyblas info` with an empty cache, in first_ms.

Per kind: the median over rounds of the first-call ms (plain / hyblas cold / hyblas warm), the
median over rounds of the paired ratios cold/plain and warm/plain (the runs of one round are
back to back), the median ready seconds (cold, and its worst round; warm), and the spread of the plain first call
across rounds (max/min) as the noise reference. Timings of rows that are not ok still count
(a wrong answer is reported, not hidden); those rows are listed under the table. A hyblas row
without ready seconds (timeout, notrace, the run died) counts as never ready (inf).
Exit status: 0, or 2 when the CSV cannot be read.
"""
import csv
import math
import statistics
import sys

FIRST_TARGET = 1.2  # hyblas's cold first call within 1.2x of plain cuBLAS's
READY_TARGET = 10.0  # seconds from the first call to hyblas's kernel in use


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    """format(x, spec), or "-" padded to the spec's width."""
    if x is not None:
        return format(x, spec)
    width = spec.split(".")[0]
    return "-".rjust(int(width)) if width.isdigit() else "-"


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"round", "program", "side", "cache", "kind", "first_ms", "ready_s", "ready_calls", "ok"}
    if rows and not need <= set(rows[0]):
        raise ValueError(f"{path}: columns {sorted(rows[0])}, want {sorted(need)}")
    return rows


def summarize(rows):
    """{(program, kind): {"plain": [...], "cold": [...], "warm": [...], ratios, ready}} in CSV order."""
    kinds = {}
    by_round = {}  # (program, kind, round, cache) -> row
    for r in rows:
        if r["program"] == "info":
            continue
        key = (r["program"], r["kind"])
        kinds.setdefault(key, None)
        by_round[key + (r["round"], r["cache"])] = r
    out = {}
    rounds = sorted({r["round"] for r in rows}, key=lambda x: (num(x) is None, num(x) or 0, x))
    for key in kinds:
        d = {"plain": [], "cold": [], "warm": [], "cold_ratio": [], "warm_ratio": [], "ready_cold": [],
             "ready_warm": []}
        for rnd in rounds:
            plain = by_round.get(key + (rnd, "none"))
            p = num(plain["first_ms"]) if plain else None
            d["plain"].append(p)
            for cache in ("cold", "warm"):
                r = by_round.get(key + (rnd, cache))
                v = num(r["first_ms"]) if r else None
                d[cache].append(v)
                d[cache + "_ratio"].append(v / p if v is not None and p else None)
                # No ready seconds in a hyblas row (timeout, notrace, the run died): never ready,
                # which counts against the target instead of dropping out of the median.
                ready = num(r["ready_s"]) if r else None
                d["ready_" + cache].append(ready if ready is not None or r is None else math.inf)
        out[key] = d
    return out


def table(rows, s):
    lines = []
    hdr = (f"{'kind':<12} {'plain ms':>9} {'cold ms':>9} {'warm ms':>9} {'cold/plain':>10} {'warm/plain':>10} "
           f"{'ready cold s':>12} {'(worst)':>8} {'ready warm s':>12} {'plain max/min':>13}")
    lines.append(hdr)
    lines.append("-" * len(hdr))
    verdict_first, verdict_ready = [], []
    for (program, kind), d in s.items():
        plain = [x for x in d["plain"] if x is not None]
        spread = max(plain) / min(plain) if len(plain) > 1 and min(plain) > 0 else None
        cr, rc = median(d["cold_ratio"]), median(d["ready_cold"])
        rcs = [x for x in d["ready_cold"] if x is not None]
        worst = max(rcs) if rcs else None
        lines.append(
            f"{kind:<12} {fmt(median(d['plain']), '9.2f')} {fmt(median(d['cold']), '9.2f')} "
            f"{fmt(median(d['warm']), '9.2f')} {fmt(cr, '10.2f')} {fmt(median(d['warm_ratio']), '10.2f')} "
            f"{fmt(rc, '12.2f')} {fmt(worst, '8.2f')} {fmt(median(d['ready_warm']), '12.2f')} {fmt(spread, '13.2f')}")
        verdict_first.append((kind, cr))
        verdict_ready.append((kind, worst))
    info = [num(r["first_ms"]) for r in rows if r["program"] == "info"]
    mi = median(info)
    nrounds = len({r["round"] for r in rows})
    lines.append("")
    lines.append(f"medians over {nrounds} round(s); ratios are medians of the per-round ratios (same round, "
                 "back-to-back runs); ready = seconds from the kind's first call to the end of the first call "
                 "that ran on hyblas (a ready-loop call, so warm is > 0 even when the kernel was loaded at once)")
    lines.append(f"hyblas info, empty cache: median {fmt(mi, '.0f')} ms wall over {len([x for x in info if x is not None])} run(s)")

    def verdict(name, items, good, unit):
        missing = [k for k, v in items if v is None]
        over = [f"{k} {v:.2f}{unit}" for k, v in items if v is not None and not good(v)]
        if missing:
            return f"{name}: NOT MEASURED for {', '.join(missing)}" + (f"; over: {', '.join(over)}" if over else "")
        return f"{name}: {'MET' if not over else 'MISSED (' + ', '.join(over) + ')'}"

    lines.append(verdict(f"target cold/plain first call <= {FIRST_TARGET}", verdict_first,
                         lambda v: v <= FIRST_TARGET, "x"))
    lines.append(verdict(f"target ready (cold, worst round) < {READY_TARGET:.0f} s", verdict_ready,
                         lambda v: v < READY_TARGET, " s"))
    bad = [r for r in rows if r["ok"] != "ok"]
    if bad:
        lines.append(f"{len(bad)} row(s) not ok:")
        for r in bad:
            lines.append("  " + ",".join(r[c] or "" for c in ("round", "program", "side", "cache", "kind", "first_ms",
                                                                "ready_s", "ready_calls", "ok")))
    else:
        lines.append("every row ok (results checked against the CPU reference)")
    return "\n".join(lines)


def plot(s, svg):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not importable: no plot ({svg} not written)")
        return
    kinds = [k for (_, k) in s]
    data = list(s.values())
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    w = 0.27
    series = [("plain", "plain cuBLAS", "#777777"), ("cold", "hyblas, empty cache", "#d62728"),
              ("warm", "hyblas, filled cache", "#1f77b4")]
    for j, (col, label, color) in enumerate(series):
        xs = [i + (j - 1) * w for i in range(len(kinds))]
        meds = [median(d[col]) for d in data]
        ax1.bar(xs, [m if m is not None else 0 for m in meds], w, label=label, color=color, alpha=0.85)
        for x, d in zip(xs, data):  # every round, so the spread shows
            pts = [v for v in d[col] if v is not None]
            ax1.plot([x] * len(pts), pts, "k.", ms=3)
    ax1.set_yscale("log")
    ax1.set_xticks(range(len(kinds)))
    ax1.set_xticklabels(kinds)
    ax1.set_ylabel("first call, ms (wall, incl. synchronize)")
    ax1.set_title("first call in a fresh process (bar: median, dots: rounds)")
    ax1.legend(fontsize=8)
    finite = [v for d in data for c in ("ready_cold", "ready_warm") for v in d[c] if v is not None and math.isfinite(v)]
    ytop = max(finite + [READY_TARGET]) * 1.45  # room above the bars for the "never ready" notes
    for j, (col, label, color) in enumerate([("ready_cold", "empty cache", "#d62728"),
                                             ("ready_warm", "filled cache", "#1f77b4")]):
        xs = [i + (j - 0.5) * w for i in range(len(kinds))]
        meds = [median(d[col]) for d in data]
        ax2.bar(xs, [m if m is not None and math.isfinite(m) else 0 for m in meds], w, label=label, color=color,
                alpha=0.85)
        for x, m, d in zip(xs, meds, data):
            pts = [v for v in d[col] if v is not None and math.isfinite(v)]
            ax2.plot([x] * len(pts), pts, "k.", ms=3)
            never = sum(1 for v in d[col] if v is not None and not math.isfinite(v))
            if never:  # rounds where hyblas's kernel never answered within the timeout
                ax2.annotate(f"never ready: {never} round(s)", (x, ytop * 0.97), ha="center", va="top",
                             fontsize=7, color=color, rotation=90)
    ax2.set_ylim(0, ytop)
    ax2.axhline(READY_TARGET, color="k", ls="--", lw=0.8, label=f"target {READY_TARGET:.0f} s")
    ax2.set_xticks(range(len(kinds)))
    ax2.set_xticklabels(kinds)
    ax2.set_ylabel("s from first call to first call on hyblas")
    ax2.set_title("hyblas's kernel in use")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(svg)
    print(f"wrote {svg}")


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        rows = load(argv[1])
    except (OSError, ValueError) as e:
        print(f"summarize: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"summarize: {argv[1]} has no rows", file=sys.stderr)
        return 2
    s = summarize(rows)
    print(table(rows, s))
    if len(argv) == 3:
        plot(s, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
