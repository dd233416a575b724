#!/usr/bin/env bash
# Runs ON THE GPU HOST with gpu-stage/ (scripts/gpu-stage.sh): issue 5's full run in two calls
# that each fit the device tool's 600 s limit, on one machine, each leaving one archive
# $OUT/r.tgz (the device tool brings back few files, so everything goes in one):
#
#   bash scripts/gpu-offload-halves.sh A
#       `hyblas tune offload`, the trace stage, offloadbench d/s GEMM, DSYRK, DTRSM against
#       NVBLAS (~515 s on an H200 host)
#   bash scripts/gpu-offload-halves.sh B [RECIPE]
#       the GPU tests (gpu_offload, gpu_offload_l3) and offloadbench ZGEMM with the recipe A
#       tuned (~160-210 s). Where the machine is a fresh one (A's recipe gone with the old
#       one), RECIPE (A's r/recipes/<gpu>.txt, copied into gpu-stage/ here so that it travels) is copied into the
#       cache first; the note should then say ZGEMM ran on another host.
#
# Here: extract with `mkdir -p /tmp/RUN && tar xzf <files_at>/r.tgz -C /tmp/RUN`; B's ZGEMM
# results are under r/zgemm/.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
half=${1:-}
DEST=${OUT:-/tmp/gpu-offload-halves}
mkdir -p "$DEST/r"
cache="${HYBLAS_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hyblas}"
case $half in
    A)
        OUT="$DEST/r" bash scripts/gpu-offload.sh --bench-only --main-only 2>&1 | tee "$DEST/r/run.log"
        rc=${PIPESTATUS[0]}
        ;;
    B)
        if ! compgen -G "$cache/recipes/*" >/dev/null && [ -n "${2:-}" ]; then
            mkdir -p "$cache/recipes" && cp "$2" "$cache/recipes/" && echo "fresh machine: using recipe $2"
        fi
        OUT="$DEST/r" bash scripts/gpu-offload.sh --zgemm-only --no-tune 2>&1 | tee "$DEST/r/run.log"
        rc=${PIPESTATUS[0]}
        ;;
    *) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
(cd "$DEST" && tar czf r.tgz r && rm -rf r)
exit "$rc"
