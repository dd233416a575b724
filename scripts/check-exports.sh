#!/usr/bin/env bash
# Check that LIB exports the whole reference BLAS ABI, in both integer widths:
#   - every symbol the reference libblas.so.3 exports (nm -D --defined-only), except the
#     internal Fortran helpers `*sub_` (ddotsub_ ...: wrappers the reference CBLAS calls);
#   - for each Fortran symbol `name_` also the ILP64 `name_64_`;
#   - for each `cblas_name` also `cblas_name64_` (except cblas_xerbla, which takes no sizes);
#   - each with the reference's kind (function or data), in the default (unversioned) namespace.
# Prints what is missing and exits 1 if anything is.
# Usage: scripts/check-exports.sh [LIB]   (default target/release/libhyblas.so)
#        REF_BLAS=/path/to/reference/libblas.so.3 overrides the reference library.
set -euo pipefail
export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIB="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/libhyblas.so}"
REF="${REF_BLAS:-/usr/lib/x86_64-linux-gnu/blas/libblas.so.3}"
for f in "$LIB" "$REF"; do
    [[ -e "$f" ]] || { echo "check-exports: $f not found" >&2; exit 2; }
done

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# "name kind" lines, kind F (function) or D (data), for defined dynamic symbols. Versioned
# names (name@@VER) are kept with their version so they do not count as the plain name.
exports() {
    nm -D --defined-only "$1" | awk '
        NF >= 3 {
            k = ($2 ~ /^[TtWi]$/) ? "F" : "D"
            print $3, k
        }' | sort -u
}
exports "$REF" >"$TMP/ref"
exports "$LIB" >"$TMP/lib"

# The wanted list: "name kind".
awk '
    $1 ~ /sub_$/ { next }                                  # internal Fortran helpers
    { print }
    $1 ~ /^cblas_/ && $1 != "cblas_xerbla" { print $1 "64_", $2; next }
    $1 !~ /^cblas_/ && $1 ~ /_$/ { print substr($1, 1, length($1) - 1) "_64_", $2 }
' "$TMP/ref" | sort -u >"$TMP/want"

missing=0
wrongkind=0
while read -r name kind; do
    got="$(awk -v n="$name" '$1 == n { print $2; exit }' "$TMP/lib")"
    if [[ -z "$got" ]]; then
        echo "missing: $name"
        missing=$((missing + 1))
    elif [[ "$got" != "$kind" ]]; then
        echo "wrong kind: $name is $([[ $got == F ]] && echo a function || echo data), the reference's $([[ $kind == F ]] && echo a function || echo data)"
        wrongkind=$((wrongkind + 1))
    fi
done <"$TMP/want"

total="$(wc -l <"$TMP/want")"
lp64="$(grep -cvE '(64_) ' "$TMP/want" || true)"
extra="$(comm -23 <(cut -d' ' -f1 "$TMP/lib") <(cut -d' ' -f1 "$TMP/want") | grep -vE '^(hyblas_|openblas_)' || true)"
echo "check-exports: $LIB"
echo "  wanted $total symbols ($lp64 reference LP64 + $((total - lp64)) ILP64 twins), missing $missing, wrong kind $wrongkind"
if [[ -n "$extra" ]]; then
    echo "  also exported (not in the reference ABI, not hyblas_*/openblas_*): $(echo "$extra" | wc -l)"
    echo "$extra" | sed 's/^/    /' | head -40
fi
if [[ "$missing" -ne 0 || "$wrongkind" -ne 0 ]]; then
    exit 1
fi
echo "check-exports: all passed"
