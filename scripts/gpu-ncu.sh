#!/usr/bin/env bash
# Runs ON THE GPU HOST with gpu-stage/ (scripts/gpu-stage.sh): Nsight Compute's detailed
# sections (speed of light, memory workload, occupancy, launch statistics, scheduler and warp
# states) for hyblas's AND cuBLAS's kernels at a Level 2 point, in one report, to see why one
# side is slower (gpu-prof.sh gives only durations).
#
#   bash scripts/gpu-ncu.sh POINT ...     POINT: routine:precision:n[:trmv-variant][:pad]
#                                         e.g. gemv_n:z:2048  trmv:s:8192:lnn  gemv_n:d:5120::8
# Output: $OUT/ncu-<point>.txt (else build/gpu-ncu/). Clocks are left alone
# (--clock-control none), as in the benchmarks. GPUBENCH=path profiles another gpubench build
# (e.g. gpu-stage/old/gpubench, as scripts/gpu-ab.sh uses). NCU_FILTER=REGEX picks the kernels
# by name (default gemv|trmv|ger; cuBLAS names some of its GEMV kernels otherwise, so "." for
# all of them).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
DEST="${OUT:-$ROOT/build/gpu-ncu}"
mkdir -p "$DEST"
. "$ROOT/scripts/gpu-env.sh"
export HYBLAS_CACHE_DIR="${HYBLAS_CACHE_DIR:-$ROOT/build/hyblas-cache}"
# Source lines in the report (the cubins then carry their PTX text).
export HYBLAS_KERNEL_LINEINFO="${HYBLAS_KERNEL_LINEINFO:-1}"
BENCH="${GPUBENCH:-$STAGE/gpubench}"
chmod +x "$BENCH" 2>/dev/null || true
NCU="$(find_ncu)"
[ -n "$NCU" ] || { echo "gpu-ncu: no ncu"; exit 1; }
for pt in "$@"; do
    IFS=: read -r routine prec size variant pad <<<"$pt"
    args=(--no-entry --min-reps 1 --max-reps 1 --only "$routine" --prec "$prec" --n "$size" --out "$DEST/tmp")
    [ -n "${variant:-}" ] && args+=(--trmv "$variant")
    [ -n "${pad:-}" ] && args+=(--pad "$pad")
    # Compile and cache the kernels outside the profiler.
    "$BENCH" "${args[@]}" >/dev/null 2>&1
    out="$DEST/ncu-${pt//:/-}.txt"
    "$NCU" --clock-control none -k "regex:${NCU_FILTER:-gemv|trmv|ger}" --launch-count "${NCU_LAUNCHES:-40}" \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
        --section SchedulerStats --section WarpStateStats \
        "$BENCH" "${args[@]}" >"$out" 2>&1
    # One block per distinct kernel (hyblas's and cuBLAS's): median duration, then the first
    # launch's headline metrics.
    python3 - "$pt" "$out" <<'PY'
import re, sys
pt, path = sys.argv[1], sys.argv[2]
kern, cur = {}, None
for line in open(path, errors="replace"):
    m = re.match(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context", line)
    if m:
        name = re.sub(r"<.*", "", m.group(1)).replace("void ", "")
        cur = {"grid": "x".join(m.group(i) for i in (2, 3, 4)), "block": "x".join(m.group(i) for i in (5, 6, 7)), "tmpl": m.group(1)[:160]}
        kern.setdefault(name, []).append(cur)
        continue
    m = re.match(r"^    (\S.*?)\s{2,}(\S+)?\s+([-\d.,]+)$", line.rstrip())
    if m and cur is not None:
        cur.setdefault(m.group(1).strip(), m.group(3))
keys = ["Duration", "DRAM Throughput", "Memory Throughput", "L1/TEX Hit Rate", "L2 Hit Rate", "Registers Per Thread",
        "Theoretical Occupancy", "Achieved Occupancy", "Achieved Active Warps Per SM", "Issued Warp Per Scheduler",
        "No Eligible", "Warp Cycles Per Issued Instruction", "Dynamic Shared Memory Per Block", "Static Shared Memory Per Block", "Waves Per SM", "Block Limit Registers", "Mem Busy", "Max Bandwidth"]
print(f"== {pt}")
for name, runs in kern.items():
    d = sorted(float(r.get("Duration", "nan").replace(",", "")) for r in runs)
    r = runs[0]
    print(f"  {name}  x{len(runs)}  grid {r['grid']} block {r['block']}  median duration {d[len(d)//2]:.2f} us")
    print(f"     {r['tmpl']}")
    print("     " + "  ".join(f"{k}={r[k]}" for k in keys if k in r))
PY
done
rm -rf "$DEST/tmp"
