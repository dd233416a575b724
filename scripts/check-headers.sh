#!/usr/bin/env bash
# Check the public headers in include/:
#   1. include/cblas64.h is what scripts/check-headers.sh --write generates from include/cblas.h
#      (the ILP64 prototypes are the LP64 ones with int64_t and the `64_` suffix);
#   2. every header compiles alone and together as C99, C11, C++11 and C++17 with
#      -Wall -Wextra -Wpedantic -Werror (gcc/g++, and clang if installed);
#   3. each cblas.h prototype has exactly the type of the reference CBLAS header's one
#      (compared through C++ typeid, so parameter names and top-level const do not matter),
#      when the reference header is installed (Debian: libblas-dev), and each cblas64.h
#      prototype is its LP64 twin with int -> int64_t.
# Usage: scripts/check-headers.sh [--write]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INC="$ROOT/include"
REF_HEADER="${REF_CBLAS_H:-/usr/include/x86_64-linux-gnu/cblas-netlib.h}"

# ----------------------------------------------------------------------------------------
# cblas64.h generation: the prototype block of cblas.h (from the first section banner up to
# the error-handler banner), with `const int ` -> `const int64_t ` and cblas_x( -> cblas_x64_(.
gen_cblas64() {
    cat <<'EOF'
/*
 * cblas64.h -- the ILP64 CBLAS interface of hyblas: every dimension and increment is int64_t,
 * every symbol carries the suffix `64_` (cblas_dgemm64_), the naming OpenBLAS uses for its
 * 64-bit-integer builds. Enums and CBLAS_INDEX come from cblas.h; both headers may be included
 * in one program, and both interfaces live in the one libhyblas.so.
 *
 * Generated from cblas.h by `scripts/check-headers.sh --write`. Do not edit.
 */
#ifndef HYBLAS_CBLAS64_H
#define HYBLAS_CBLAS64_H

#include "cblas.h"

#ifdef __cplusplus
extern "C" {
#endif

EOF
    awk '
        /^\/\* =+ *$/ && !started { started = 1 }
        /^ \* Error handler/ { exit }
        started { buf[n++] = $0 }
        END { for (i = 0; i < n - 1; i++) print buf[i] }   # drop the error banner opening line
    ' "$INC/cblas.h" |
        sed -E -e 's/const int ([A-Za-z*])/const int64_t \1/g' -e 's/\b(cblas_[a-z0-9_]+)\(/\164_(/'
    cat <<'EOF'
#ifdef __cplusplus
}
#endif

#endif /* HYBLAS_CBLAS64_H */
EOF
}

if [[ "${1:-}" == "--write" ]]; then
    gen_cblas64 >"$INC/cblas64.h"
    echo "wrote include/cblas64.h"
    exit 0
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail=0
note() { printf '%s\n' "$*"; }
bad() {
    printf 'FAIL: %s\n' "$*"
    fail=1
}

# 1. generated header up to date -------------------------------------------------------
gen_cblas64 >"$TMP/cblas64.h"
if diff -u "$INC/cblas64.h" "$TMP/cblas64.h" >"$TMP/gen.diff"; then
    note "ok: include/cblas64.h matches its generator"
else
    cat "$TMP/gen.diff"
    bad "include/cblas64.h is stale: run scripts/check-headers.sh --write"
fi

# 2. strict compiles -------------------------------------------------------------------
cat >"$TMP/all.c" <<'EOF'
#include <hyblas.h>
#include <cblas.h>
#include <cblas64.h>
#include <cblas.h>
int main(void) {
    enum CBLAS_ORDER o = CblasRowMajor;
    CBLAS_LAYOUT l = CblasColMajor;
    CBLAS_ORDER o2 = l;
    CBLAS_INDEX i = 0;
    CBLAS_INT n = 1;
    (void)o; (void)o2; (void)i; (void)n;
    return (int)sizeof(CBLAS_TRANSPOSE) == (int)sizeof(int) ? 0 : 1;
}
EOF
cp "$TMP/all.c" "$TMP/all.cpp"
compilers=(gcc g++)
command -v clang >/dev/null 2>&1 && compilers+=(clang clang++)
for cc in "${compilers[@]}"; do
    case "$cc" in
        *++) stds=(c++11 c++17); src="$TMP/all.cpp" ;;
        *) stds=(c99 c11); src="$TMP/all.c" ;;
    esac
    for std in "${stds[@]}"; do
        for h in hyblas.h cblas.h cblas64.h; do
            printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >"$TMP/one.${src##*.}"
            if ! "$cc" -std="$std" -Wall -Wextra -Wpedantic -Werror -I"$INC" -c "$TMP/one.${src##*.}" -o "$TMP/one.o" 2>"$TMP/err"; then
                cat "$TMP/err"
                bad "$h does not compile with $cc -std=$std"
            fi
        done
        if "$cc" -std="$std" -Wall -Wextra -Wpedantic -Werror -I"$INC" -c "$src" -o "$TMP/all.o" 2>"$TMP/err"; then
            note "ok: hyblas.h + cblas.h + cblas64.h with $cc -std=$std -Wall -Wextra -Wpedantic -Werror"
        else
            cat "$TMP/err"
            bad "headers together do not compile with $cc -std=$std"
        fi
    done
done

# 3. prototype types -------------------------------------------------------------------
# A C++ program prints `name typeid(name)` for every function; the type mangling ignores
# parameter names and top-level const, and names enums by their tag.
typeids() { # header-dir header-name suffix -> lines "name mangled-type"
    local dir="$1" header="$2" sfx="$3"
    local names
    names="$(grep -oE '\bcblas_[a-z0-9_]+\(' "$dir/$header" | tr -d '(' | sort -u)"
    {
        printf '#include <%s>\n#include <cstdio>\n#include <typeinfo>\nint main() {\n' "$header"
        for f in $names; do
            printf '    std::printf("%%s %%s\\n", "%s", typeid(%s).name());\n' "${f%"$sfx"}" "$f"
        done
        printf '    return 0;\n}\n'
    } >"$TMP/typeids.cpp"
    g++ -std=c++11 -I"$dir" -I"$INC" "$TMP/typeids.cpp" -o "$TMP/typeids" && "$TMP/typeids" | sort
}
typeids "$INC" cblas.h "" >"$TMP/all.txt"
# oneMKL's batched GEMM extension (8 functions) is not in the reference: compared below as
# names only; the rest must be the reference's 149.
grep -E '^cblas_[sdcz]gemm_batch' "$TMP/all.txt" >"$TMP/ext.txt" || true
grep -vE '^cblas_[sdcz]gemm_batch' "$TMP/all.txt" >"$TMP/ours.txt"
count="$(wc -l <"$TMP/ours.txt")"
if [[ "$count" -ne 149 ]]; then
    bad "cblas.h declares $count reference functions, the reference 149"
fi
if [[ "$(wc -l <"$TMP/ext.txt")" -ne 8 ]]; then
    bad "cblas.h declares $(wc -l <"$TMP/ext.txt") batched GEMM functions, not 8"
fi
if [[ -f "$REF_HEADER" ]]; then
    mkdir -p "$TMP/ref"
    cp "$REF_HEADER" "$TMP/ref/cblas.h"
    # The reference header includes cblas_mangling.h from its own directory.
    [[ -f "$(dirname "$REF_HEADER")/cblas_mangling.h" ]] && cp "$(dirname "$REF_HEADER")/cblas_mangling.h" "$TMP/ref/"
    typeids "$TMP/ref" cblas.h "" >"$TMP/ref.txt"
    if diff "$TMP/ref.txt" "$TMP/ours.txt" >"$TMP/ref.diff"; then
        note "ok: all $count cblas.h prototypes have the reference types ($REF_HEADER)"
    else
        cat "$TMP/ref.diff"
        bad "cblas.h prototypes differ from $REF_HEADER (< reference, > ours)"
    fi
else
    note "skip: no reference header at $REF_HEADER (install libblas-dev to compare prototypes)"
fi
typeids "$INC" cblas64.h "64_" >"$TMP/ours64.txt"
# LP64 -> ILP64: builtin `i` (int) becomes `l` (long = int64_t); nothing else in these
# manglings is a lowercase i (enum tags are upper case).
cat "$TMP/ours.txt" "$TMP/ext.txt" | sort | grep -v '^cblas_xerbla ' | awk '{ gsub("i", "l", $2); print }' >"$TMP/want64.txt"
if diff "$TMP/want64.txt" "$TMP/ours64.txt" >"$TMP/64.diff"; then
    note "ok: all $(wc -l <"$TMP/ours64.txt") cblas64.h prototypes are the LP64 ones with int64_t"
else
    cat "$TMP/64.diff"
    bad "cblas64.h prototypes are not the int64_t twins of cblas.h (< wanted, > found)"
fi

if [[ "$fail" -ne 0 ]]; then
    echo "check-headers: FAILED"
    exit 1
fi
echo "check-headers: all passed"
