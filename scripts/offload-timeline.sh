#!/usr/bin/env bash
# The pipeline's timeline of host GEMM calls offloaded GPU-only and co-executed at SHARE
# (HYBLAS_OFFLOAD_TIMELINE=1): the last call of each, and per call how long each piece took to
# pack (after its chunk was free) and the packing rate. Runs on the GPU host from the
# repository root with gpu-stage/ (scripts/gpu-stage.sh), or here with a GPU.
#   OFFLOADBENCH  the offloadbench binary (default gpu-stage/offloadbench)
#   ROUTINE       (default dgemm)   N (default 1024)   SHARE (default 0.7)   REPS (default 8)
# Other HYBLAS_* settings pass through (e.g. HYBLAS_OFFLOAD_PIECES=8, HYBLAS_OFFLOAD_CREW=1).
# Session 34 on an H200 host (DGEMM n = 1024, 2 MB pieces): every piece packed in 110-130 us
# (17-19 GB/s) by 8 pool threads, 110-150 us by 4 feeders; the chunk ring never waited.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -e scripts/gpu-env.sh ] && . scripts/gpu-env.sh
BIN=${OFFLOADBENCH:-gpu-stage/offloadbench}
DIR=${OUT:-/tmp/offload-timeline}
mkdir -p "$DIR"
HYBLAS_OFFLOAD_TIMELINE=1 "$BIN" --n "${N:-1024}" --routines "${ROUTINE:-dgemm}" --modes gpu,split \
    --shares "${SHARE:-0.7}" --reps "${REPS:-8}" --budget-s 0 --nvblas off --out "$DIR/bench" \
    >"$DIR/bench.txt" 2>"$DIR/timeline.txt" || { echo "offloadbench failed"; tail "$DIR/bench.txt"; exit 1; }
grep -E "n=[0-9]+ (gpu|split)" "$DIR/bench.txt"
python3 - "$DIR/timeline.txt" <<'EOF'
import sys, statistics
calls, cur = [], None
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "timeline":
        cur = {"head": line.strip(), "ev": []}
        calls.append(cur)
    elif f and f[0] == "tl" and cur is not None:
        cur["ev"].append((float(f[1]), f[2], int(f[3]), int(f[4])))
last = {}
for c in calls:
    kind = c["head"].split()[1]
    waited, packs = None, []
    for t, what, a, b in c["ev"]:
        if what == "up-waited":
            waited = t
        elif what == "up-packed" and waited is not None:
            packs.append((t - waited, a))
    c["packs"] = packs
    last[kind] = c
print("per call: kind, total, pieces, median pack us, median pack GB/s")
for c in calls[1:]:
    p = c["packs"]
    if p:
        us = statistics.median(x[0] for x in p)
        gbs = statistics.median(x[1] / x[0] / 1e3 for x in p if x[0] > 0)
        print(c["head"].split()[1], c["head"].split()[-1], len(p), "%.1f" % us, "%.1f" % gbs)
for kind, c in last.items():
    print("\nlast", c["head"])
    for t, what, a, b in c["ev"]:
        print("  %8.1f %-14s %d %d" % (t, what, a, b))
EOF
