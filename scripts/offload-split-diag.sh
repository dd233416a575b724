#!/usr/bin/env bash
# Co-executed host GEMM at forced GPU shares beside GPU-only, with setting KNOB at each of
# VALUES (and unset, "default"), three turns of every value so a drift of the host falls on
# each alike.
# Runs on the GPU host from the repository root with gpu-stage/ (scripts/gpu-stage.sh).
#   TUNE=1        run `hyblas tune offload` first (else the recipe in the cache is used)
#   N             sizes (default 1024,2048)
#   ROUTINES      (default "dgemm sgemm")
#   SHARES        (default 0.5,0.6,0.7,0.8,0.9)
#   KNOB          the setting (default HYBLAS_OFFLOAD_PIECES)
#   VALUES        its values beside the default (default "8"). An entry with '=' is a set of
#                 settings instead, joined by '+' (e.g. "HYBLAS_OFFLOAD_CREW=1
#                 HYBLAS_OFFLOAD_PIECES=8+HYBLAS_OFFLOAD_CREW=1"); every setting named anywhere
#                 is unset for the others
#   TURNS         turns of every value (default 3)
# Prints "turn variant routine n mode share us gpu_side_us cpu_side_us cfg=feeders/threads" (medians
# of the calls),
# then the means over the turns; writes the samples under $OUT (or /tmp/split-diag).
set -uo pipefail
cd "$(dirname "$0")/.."
STAGE=gpu-stage
. scripts/gpu-env.sh
stage_exec "$STAGE"
DIR=${OUT:-/tmp/split-diag}
mkdir -p "$DIR"
if [ "${TUNE:-0}" = 1 ]; then
    "$STAGE/hyblas" tune offload >"$DIR/tune.log" 2>&1 || { echo "tune failed"; tail -20 "$DIR/tune.log"; }
    sed -n '/^offload model:/,$p' "$DIR/tune.log" | head -40
fi
. scripts/settings-sets.sh
KNOB=${KNOB:-HYBLAS_OFFLOAD_PIECES}
ALL=$(settings_named "$KNOB" ${VALUES:-8})
for turn in $(seq "${TURNS:-3}"); do
    for v in default ${VALUES:-8}; do
        apply_entry "$KNOB" "$v" "$ALL"
        for r in ${ROUTINES:-dgemm sgemm}; do
            s="$DIR/s-$turn-$v-$r.csv"
            "$STAGE/offloadbench" --n "${N:-1024,2048}" --routines "$r" --modes gpu,split \
                --shares "${SHARES:-0.5,0.6,0.7,0.8,0.9}" --nvblas off --budget-s 0.3 \
                --out "$DIR/o-$turn-$v-$r" --samples "$s" >"$DIR/log-$turn-$v-$r.txt" 2>&1 ||
                { echo "offloadbench failed: $v $r"; tail -5 "$DIR/log-$turn-$v-$r.txt"; }
            python3 - "$s" "$turn" "$v" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    key = (r["routine"], int(r["n"]), r["mode"], r.get("share", ""))
    by.setdefault(key, []).append(r)
def med(rs, k):
    v = [float(r[k]) for r in rs if r.get(k) not in (None, "", "nan")]
    return statistics.median(v) if v else float("nan")
for (rt, n, mode, sh), rs in sorted(by.items()):
    cfg = sorted({(r.get("feeders", ""), r.get("cpu_threads", "")) for r in rs})
    print(sys.argv[2], sys.argv[3], rt, n, mode, sh, "%.1f" % med(rs, "us"),
          "%.1f" % med(rs, "gpu_side_us"), "%.1f" % med(rs, "cpu_side_us"),
          "cfg=" + ",".join("%s/%s" % c for c in cfg), flush=True)
EOF
        done
    done
done | tee "$DIR/turns.txt"
echo "== means over turns (us): variant routine n mode share"
python3 - "$DIR/turns.txt" <<'EOF'
import sys, statistics
acc = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 10:
        continue
    acc.setdefault(tuple(f[1:6]), []).append(float(f[6]))
for k, v in sorted(acc.items(), key=lambda kv: (kv[0][1], int(kv[0][2]), kv[0][4], kv[0][0])):
    print(*k, "%.1f" % statistics.mean(v), "(%s)" % " ".join("%.0f" % x for x in v))
EOF
