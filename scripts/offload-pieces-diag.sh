#!/usr/bin/env bash
# Session 35's one-call diagnostic of the offload pipeline's copy pieces (HYBLAS_OFFLOAD_PIECES)
# and the spinning crew (HYBLAS_OFFLOAD_CREW=1) on the GPU host with gpu-stage/: which of them
# to make the default. Every setting set against the default, in turns:
#   1. co-executed DGEMM/SGEMM n = 1024 at GPU shares 0.5..0.9 beside GPU-only (three turns;
#      scripts/offload-split-diag.sh): does the split curve, flat at 1024 so far, change shape;
#   2. GPU-only d/s/z GEMM, DSYRK, DTRSM at n = 512 and 2048 (two turns;
#      scripts/offload-tile-diag.sh): what the setting does away from 1024;
#   3. the timeline of DGEMM 1024 with the crew (scripts/offload-timeline.sh): per-piece pack time.
# Leaves one archive, $OUT/r.tgz (here: tar xzf <files_at>/r.tgz -C /tmp/RUN).
#   SETS   the setting sets (default: pieces 8, pieces 4, crew, pieces 8 with crew)
# Session 35 ran it on 217bdb8, whose defaults were 16 pieces and the pool (results in
# bench/results/nvidia-h200-sm90-offload-pipeline-diag.txt, sections 4-7); since 8103eef the
# default is 8 pieces and the crew, so the old way is the set to compare:
# SETS="HYBLAS_OFFLOAD_PIECES=16+HYBLAS_OFFLOAD_CREW=0 ...".
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
stage_exec gpu-stage
DEST=${OUT:-/tmp/pieces-diag}
mkdir -p "$DEST/r"
SETS=${SETS:-"HYBLAS_OFFLOAD_PIECES=8 HYBLAS_OFFLOAD_PIECES=4 HYBLAS_OFFLOAD_CREW=1 HYBLAS_OFFLOAD_PIECES=8+HYBLAS_OFFLOAD_CREW=1"}
echo "== 1. split curves at n = 1024"
OUT="$DEST/r/split" VALUES="$SETS" N=1024 bash scripts/offload-split-diag.sh | sed -n '/^== means/,$p'
echo "== 2. GPU-only at n = 512, 2048 (turn routine n setting ms)"
TURNS=2 N=512,2048 TILES="$SETS" OFFLOADBENCH=gpu-stage/offloadbench bash scripts/offload-tile-diag.sh |
    tee "$DEST/r/gpu-only.txt"
echo "== 3. timeline, DGEMM 1024, crew"
OUT="$DEST/r/timeline-crew" HYBLAS_OFFLOAD_CREW=1 bash scripts/offload-timeline.sh | sed -n '1,/^last/p'
(cd "$DEST" && tar czf r.tgz r && rm -rf r)
