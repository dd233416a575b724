#!/usr/bin/env bash
# Runs ON THE GPU HOST: A/B timing of two gpubench builds (gpu-stage/old/gpubench, the build
# before a change, and gpu-stage/gpubench) on the same GPU in one call, alternating A B A B so
# drift shows, plus optional environment variants of the new build.
#
#   bash scripts/gpu-ab.sh "GPUBENCH ARGS" [NAME=ENV ...]
#
# e.g. bash scripts/gpu-ab.sh "--only trmv --prec s,d --n 8192" pdl0=HYBLAS_PDL=0
#      bash scripts/gpu-ab.sh "--only gemm_smallout --gemm-points d:tn:8:8:2^20" ms2=HYBLAS_SPLITK_MIN_STEPS=2
# Without gpu-stage/old/gpubench only the variants run (ROUNDS=2 runs each twice, interleaved).
# NEW_ARGS: options only the new build takes (e.g. --warm, where the old one had no --cold).
# Prints per point: old, new (twice each), every variant, in us (GEMM points also each one's
# atomic-path time, column LABEL/a); writes $OUT/ab.csv.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DEST="${OUT:-$ROOT/build/gpu-ab}"
mkdir -p "$DEST"
export HYBLAS_CACHE_DIR="${HYBLAS_CACHE_DIR:-$ROOT/build/hyblas-cache}"
. "$ROOT/scripts/gpu-env.sh"
stage_exec gpu-stage
ARGS="$1"; shift
W="$(mktemp -d)"
run() { # label binary env...
    local label="$1" bin="$2"; shift 2
    mkdir -p "$W/$label"
    local extra=""
    [ "$bin" = gpu-stage/gpubench ] && extra="${NEW_ARGS:-}"
    env "$@" "$bin" --quick --no-entry $ARGS $extra --out "$W/$label" >"$W/$label.log" 2>&1 || tail -3 "$W/$label.log"
}
labels=""
if [ -x gpu-stage/old/gpubench ]; then
    run old1 gpu-stage/old/gpubench
    run new1 gpu-stage/gpubench
    run old2 gpu-stage/old/gpubench
    run new2 gpu-stage/gpubench
    labels="old1 new1 old2 new2"
fi
# Variants: ROUNDS times each (default 1), interleaved so drift shows.
for round in $(seq 1 "${ROUNDS:-1}"); do
    for v in "$@"; do
        name="${v%%=*}"; envs="${v#*=}"
        [ "${ROUNDS:-1}" -gt 1 ] && name="$name.$round"
        # NAME=K1=V1;K2=V2
        IFS=';' read -ra kv <<<"$envs"
        run "$name" gpu-stage/gpubench "${kv[@]}"
        labels="$labels $name"
    done
done
python3 - "$W" "$DEST/ab.csv" $labels <<'PY'
import csv, sys, glob, os
w, out, labels = sys.argv[1], sys.argv[2], sys.argv[3:]
# Level 1/2 rows: routine precision n. GEMM rows (gemm_smallout): precision, op(A) op(B), m x n,
# k, and besides each label's deterministic time (hyblas_us) its atomic one as LABEL/a.
data, cols = {}, []
for l in labels:
    for f in glob.glob(os.path.join(w, l, "*.csv")):
        for r in csv.DictReader(open(f)):
            if not r.get("hyblas_us"):
                continue
            if "transa" in r:
                key = (r["precision"], r["transa"] + r["transb"], int(r["m"]), int(r["n"]), int(r["k"]))
                if r.get("atomic_us"):
                    data.setdefault(key, {})[l + "/a"] = float(r["atomic_us"])
            else:
                key = (r["routine"], r["precision"], int(r["n"]))
            data.setdefault(key, {})[l] = float(r["hyblas_us"])
for l in labels:
    cols += [l] + ([l + "/a"] if any(l + "/a" in v for v in data.values()) else [])
def name(k):  # "d NN 8x8 100003" (GEMM) or "axpy d 4096"
    return f"{k[0]} {k[1]} {k[2]}x{k[3]} {k[4]}" if len(k) == 5 else " ".join(map(str, k))
with open(out, "w") as fo:
    fo.write("point," + ",".join(cols) + "\n")
    print(f'{"point":<26}' + "".join(f"{l:>9}" for l in cols))
    for k in sorted(data):
        v = data[k]
        fo.write(f"{name(k)}," + ",".join(f"{v.get(l, '')}" for l in cols) + "\n")
        print(f"{name(k):<26}" + "".join(f"{v[l]:9.2f}" if l in v else f'{"-":>9}' for l in cols))
PY
rm -rf "$W"
