#!/usr/bin/env bash
# Score the host offload model offline against every archived H200 offloadbench run that has
# its recipe (bench/results/nvidia-h200-sm90-offload-<run>.csv + -<run>-recipe.txt), in three
# forms: the calibrated model with learning (`--replay`: as the planner learnt from the run's
# whole calls), the parametric pipeline model with learning (the recipe without its timed
# whole calls, `gpu_call_ms` / `split_call_ms`), and the parametric model alone. Prints, per
# run, the split sweep's points within 15% and 20% of the measured time, the sizes whose best share
# the model put within 10 points of the measured best, and the sizes where the model's choice
# costs a user more than 3% (the measured time at the model's share, 0 = CPU-only and 1 =
# GPU-only included, over the fastest measured share). No GPU needed; issue 45 item 3 uses it
# to weigh what the model needs.
#
#   scripts/offload-rescore-all.sh [RUN ...]     (default: every run found)
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin offloadbench >/dev/null 2>&1 || { echo "offload-rescore-all: build failed" >&2; exit 1; }
B=target/release/offloadbench
R=bench/results
runs=("$@")
if [ ${#runs[@]} -eq 0 ]; then
    for c in "$R"/nvidia-h200-sm90-offload-*-recipe.txt; do
        r=${c#"$R"/nvidia-h200-sm90-offload-}; runs+=("${r%-recipe.txt}")
    done
fi
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
score() { # csv recipe [--replay]: "within15 of points, bestshare of sizes, auto misses"
    "$B" --rescore "$1" --recipe "$2" ${3:-} 2>&1 | awk '
        /split sweep: the model within/ { n = 0; for (i = 1; i <= NF; i++) if ($i == "at") { n++; if (n == 1) w = $(i+1) "/" $(i+3); if (n == 2) w20 = $(i+1); if (n == 3) a = $(i+1) "/" $(i+3) } gsub(/[);]/, "", w20) }
        /^ +[sdcz]gemm +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ / { if ($10 + 0 > 1.03 * $4) c++ }
        END { printf "%-8s %-4s %-6s %s", w, w20, a, c + 0 }'
}
printf '%-4s | %-26s | %-26s | %-26s\n' run "calibrated + learning" "parametric + learning" "parametric alone"
printf '%-4s | %-26s | %-26s | %-26s\n' "" "<=15%   <=20% best  >3%" "<=15%   <=20% best  >3%" "<=15%   <=20% best  >3%"
for run in "${runs[@]}"; do
    csv="$R/nvidia-h200-sm90-offload-$run.csv"; rec="$R/nvidia-h200-sm90-offload-$run-recipe.txt"
    [ -e "$csv" ] && [ -e "$rec" ] || continue
    grep -v 'gpu_call_ms\|split_call_ms' "$rec" > "$tmp"
    printf '%-4s | %-26s | %-26s | %-26s\n' "$run" "$(score "$csv" "$rec" --replay)" "$(score "$csv" "$tmp" --replay)" "$(score "$csv" "$tmp")"
done
