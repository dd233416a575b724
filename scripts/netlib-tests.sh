#!/usr/bin/env bash
# Run the 24 netlib BLAS test programs (Debian package libblas-test) against the BLAS in LIBDIR
# and judge each by its output.
#
#   xblat1{s,d,c,z}   Fortran Level 1      no input           output on stdout
#   xblat2{s,d,c,z}   Fortran Level 2      ?blat2.in on stdin  summary file named in the input
#   xblat3{s,d,c,z}   Fortran Level 3      ?blat3.in on stdin  (e.g. dblat2.out / SBLAT2.SUMM)
#   x{s,d,c,z}cblat1  CBLAS Level 1        no input           stdout
#   x{s,d,c,z}cblat2  CBLAS Level 2        ?in2 on stdin       stdout
#   x{s,d,c,z}cblat3  CBLAS Level 3        ?in3 on stdin       stdout
#
# Each program runs in a fresh directory with LD_LIBRARY_PATH=LIBDIR (LIBDIR/libblas.so.3 must
# be the library under test). The programs exit 0 even when tests fail, so a program PASSES
# only if all of these hold:
#   - it exited 0 within the time limit;
#   - the dynamic loader really resolved libblas.so.3 to LIBDIR/libblas.so.3 (checked with
#     LD_DEBUG=libs on the very run that is judged);
#   - every routine it tests reported PASSED: each "Test of subprogram" of Level 1 is followed
#     by "----- PASS -----"; for Level 2/3 each routine enabled in the input file has its
#     "PASSED THE ... COMPUTATIONAL TESTS" line (one per layout for CBLAS when the input asks
#     for both) and, when error exits are tested, "PASSED THE TESTS OF ERROR-EXITS" (the
#     reference complex CBLAS Level 2 tester labels ?gerc's error-exit line ?geru: accepted
#     when ?geru has two such lines), and "END OF TESTS";
#   - no line of the output (stdout, stderr, summary files) contains, case-insensitively:
#     FAIL, FATAL, ILLEGAL, "XERBLA WAS CALLED", "ERROR-EXIT TAKEN ON VALID CALL",
#     "WAS NOT TESTED", ABANDONED, "NOT DETECTED", "was incorrect" (the library's own
#     cblas_xerbla ran instead of the tester's), "panicked".
# Prints a table and the offending lines; exits 1 if any program failed.
#
# Usage: scripts/netlib-tests.sh LIBDIR [PROGRAM...]
#   PROGRAM: names like xblat3d or xzcblat2 to run a subset (default: all 24).
# Environment: NETLIB_DIR (programs and inputs, default /usr/lib/x86_64-linux-gnu/blas),
#   NETLIB_TIMEOUT (seconds per program, default 300), NETLIB_LOGDIR (keep the logs there;
#   default: a temporary directory, kept when something fails), NETLIB_JOBS (programs run
#   at once, default 2), NETLIB_PRELOAD (LD_PRELOAD for the programs: e.g. a libhyblas.so
#   in front of the reference libblas.so.3 in LIBDIR, to test a library that does not yet
#   export everything; its symbols then override the reference ones).
set -euo pipefail
export LC_ALL=C

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
    usage
    exit 2
fi
LIBDIR="$(cd "$1" && pwd)"
shift
NETLIB_DIR="${NETLIB_DIR:-/usr/lib/x86_64-linux-gnu/blas}"
TIMEOUT="${NETLIB_TIMEOUT:-300}"
JOBS="${NETLIB_JOBS:-2}"

[[ -e "$LIBDIR/libblas.so.3" ]] || { echo "netlib-tests: $LIBDIR/libblas.so.3 does not exist" >&2; exit 2; }
WANT_LIB="$(readlink -f "$LIBDIR/libblas.so.3")"
[[ -d "$NETLIB_DIR" ]] || { echo "netlib-tests: $NETLIB_DIR missing (apt-get install libblas-test)" >&2; exit 2; }

if [[ $# -gt 0 ]]; then
    PROGRAMS=("$@")
else
    PROGRAMS=()
    for p in s d c z; do PROGRAMS+=("xblat1$p" "xblat2$p" "xblat3$p"); done
    for p in s d c z; do PROGRAMS+=("x${p}cblat1" "x${p}cblat2" "x${p}cblat3"); done
fi

if [[ -n "${NETLIB_LOGDIR:-}" ]]; then
    LOGDIR="$NETLIB_LOGDIR"
    mkdir -p "$LOGDIR"
    KEEP=1
else
    LOGDIR="$(mktemp -d "${TMPDIR:-/tmp}/hyblas-netlib.XXXXXX")"
    KEEP=0
fi
LOGDIR="$(cd "$LOGDIR" && pwd)"

# The input file a program reads on stdin ("" for none).
input_of() {
    case "$1" in
        xblat1?) echo "" ;;
        xblat2?) echo "${1: -1}blat2.in" ;;
        xblat3?) echo "${1: -1}blat3.in" ;;
        x?cblat1) echo "" ;;
        x?cblat2) echo "${1:1:1}in2" ;;
        x?cblat3) echo "${1:1:1}in3" ;;
        *) return 1 ;;
    esac
}

# Run one program in its own directory; writes $dir/{log,rc,secs,loaded,verdict,why,npass}.
run_one() {
    local prog="$1" dir="$LOGDIR/$1" input rc start end
    rm -rf "$dir"
    mkdir -p "$dir"
    if ! input="$(input_of "$prog")"; then
        echo "FAIL" >"$dir/verdict"
        echo "unknown program name $prog" >"$dir/why"
        echo 0 >"$dir/npass"
        return
    fi
    if [[ ! -x "$NETLIB_DIR/$prog" ]]; then
        echo "FAIL" >"$dir/verdict"
        echo "$NETLIB_DIR/$prog not found" >"$dir/why"
        echo 0 >"$dir/npass"
        return
    fi
    [[ -z "$input" ]] || cp "$NETLIB_DIR/$input" "$dir/input"
    start=$(date +%s.%N)
    set +e
    (
        cd "$dir"
        if [[ -n "$input" ]]; then exec <input; else exec </dev/null; fi
        if [[ -n "${NETLIB_PRELOAD:-}" ]]; then export LD_PRELOAD="$NETLIB_PRELOAD"; fi
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_DEBUG=libs \
            LD_DEBUG_OUTPUT="$dir/ld" timeout --kill-after=10 "$TIMEOUT" "$NETLIB_DIR/$prog" >stdout 2>stderr
    )
    rc=$?
    set -e
    end=$(date +%s.%N)
    echo "$rc" >"$dir/rc"
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/secs"
    judge "$prog" "$dir" "$input" "$rc"
}

judge() {
    local prog="$1" dir="$2" input="$3" rc="$4" why=() loaded f
    # Everything the program said: stdout, stderr, and the summary/snapshot files it wrote.
    {
        cat "$dir/stdout" "$dir/stderr"
        for f in "$dir"/*; do
            case "$(basename "$f")" in
                stdout | stderr | input | ld.* | log | rc | secs | loaded | verdict | why | npass) ;;
                *) [[ -f "$f" ]] && cat "$f" ;;
            esac
        done
    } >"$dir/log"

    # Where libblas.so.3 came from: the last file tried in its search is the one loaded.
    loaded="$(cat "$dir"/ld.* 2>/dev/null | awk '
        /find library=libblas\.so\.3 / { s = 1; next }
        s && /trying file=/ { sub(/.*trying file=/, ""); f = $0; next }
        s && /^[ \t]*[0-9]+:[ \t]*$/ { s = 0 }
        END { print f }')"
    echo "${loaded:-?}" >"$dir/loaded"
    rm -f "$dir"/ld.*
    if [[ -z "$loaded" || "$(readlink -f "$loaded")" != "$WANT_LIB" ]]; then
        why+=("libblas.so.3 resolved to '${loaded:-nothing}', not $LIBDIR/libblas.so.3 -> $WANT_LIB")
    fi

    case "$rc" in
        0) ;;
        124 | 137) why+=("timed out after ${TIMEOUT}s") ;;
        *)
            if ((rc > 128)); then why+=("exit status $rc (signal $((rc - 128)))"); else why+=("exit status $rc"); fi
            ;;
    esac

    grep -inE 'fail|fatal|illegal|xerbla was called|error-exit taken on valid call|was not tested|abandoned|not detected|was incorrect|panicked' \
        "$dir/log" >"$dir/bad" || true
    [[ -s "$dir/bad" ]] && why+=("$(wc -l <"$dir/bad") offending line(s)")

    local npass=0 missing=()
    case "$prog" in
        xblat1? | x?cblat1)
            local ntests
            ntests=$(grep -c 'Test of subprogram number' "$dir/log" || true)
            npass=$(grep -c -- '----- PASS -----' "$dir/log" || true)
            if ((ntests == 0)); then
                why+=("no 'Test of subprogram' lines")
            elif ((npass != ntests)); then
                why+=("$npass of $ntests subprograms PASS")
            fi
            ;;
        *)
            npass=$(grep -c 'PASSED' "$dir/log" || true)
            # Routines enabled in the input ("DGEMV  T ..."), whether error exits are tested
            # ("T  LOGICAL FLAG, T TO TEST ERROR EXITS.") and which layouts (CBLAS: 0 column,
            # 1 row, 2 both).
            local routines errexits layouts r ncomp want_comp
            routines="$(awk '$2 == "T" && $1 ~ /^(cblas_)?[A-Za-z][A-Za-z0-9]*$/ && $1 != "T" && $1 != "F" { print $1 }' "$dir/input")"
            errexits="$(awk '/TEST ERROR EXITS/ { print $1 }' "$dir/input")"
            layouts="$(awk '/TEST (COLUMN|ROW)-MAJOR/ { print $1 }' "$dir/input")"
            want_comp=1
            [[ "$prog" == x?cblat? && "$layouts" == 2 ]] && want_comp=2
            [[ -n "$routines" ]] || why+=("no routines enabled in the input file")
            for r in $routines; do
                # One computational PASSED line per layout tested. The complex CBLAS Level 2
                # tester prints them without the layout word; the others name it.
                ncomp=$(grep -cE "^ *$r +PASSED THE ((COLUMN|ROW)-MAJOR +)?COMPUTATIONAL TESTS" "$dir/log" || true)
                ((ncomp == want_comp)) || missing+=("$r computational ($ncomp of $want_comp)")
                if [[ "$prog" == x?cblat? ]] && grep -qE "^ *$r +PASSED THE (COLUMN|ROW)-MAJOR" "$dir/log"; then
                    [[ "$layouts" == 1 ]] || grep -qE "^ *$r +PASSED THE COLUMN-MAJOR" "$dir/log" || missing+=("$r column-major")
                    [[ "$layouts" == 0 ]] || grep -qE "^ *$r +PASSED THE ROW-MAJOR" "$dir/log" || missing+=("$r row-major")
                fi
                if [[ "$errexits" == T ]] && ! grep -qE "^ *$r +PASSED THE TESTS OF ERROR-EXITS" "$dir/log"; then
                    # The reference complex CBLAS Level 2 tester reports the error exits of
                    # cblas_?gerc under the name cblas_?geru (it prints that line twice).
                    if [[ "$r" =~ ^cblas_([cz])gerc$ ]] &&
                        (($(grep -cE "^ *cblas_${BASH_REMATCH[1]}geru +PASSED THE TESTS OF ERROR-EXITS" "$dir/log" || true) >= 2)); then
                        :
                    else
                        missing+=("$r error-exits")
                    fi
                fi
            done
            grep -q 'END OF TESTS' "$dir/log" || why+=("no 'END OF TESTS'")
            if ((${#missing[@]} > 8)); then
                why+=("no PASSED line for: ${missing[*]:0:8} ... (${#missing[@]} in all)")
            elif ((${#missing[@]} > 0)); then
                why+=("no PASSED line for: ${missing[*]}")
            fi
            ;;
    esac
    echo "$npass" >"$dir/npass"
    if ((${#why[@]} == 0)); then
        echo PASS >"$dir/verdict"
        : >"$dir/why"
    else
        echo FAIL >"$dir/verdict"
        printf '%s\n' "${why[@]}" >"$dir/why"
    fi
}

echo "netlib BLAS tests: $NETLIB_DIR, LD_LIBRARY_PATH=$LIBDIR (libblas.so.3 -> $WANT_LIB), logs in $LOGDIR"
[[ -z "${NETLIB_PRELOAD:-}" ]] || echo "LD_PRELOAD=$NETLIB_PRELOAD"
# Run up to $JOBS programs at once (each is single-threaded Fortran plus whatever threads the
# library under test starts).
active=0
for prog in "${PROGRAMS[@]}"; do
    run_one "$prog" &
    active=$((active + 1))
    if ((active >= JOBS)); then
        wait -n || true
        active=$((active - 1))
    fi
done
wait

failed=0
printf '\n%-10s %-7s %7s %8s  %s\n' program verdict PASSED seconds "libblas.so.3 loaded from"
for prog in "${PROGRAMS[@]}"; do
    d="$LOGDIR/$prog"
    v="$(cat "$d/verdict" 2>/dev/null || echo FAIL)"
    printf '%-10s %-7s %7s %8s  %s\n' "$prog" "$v" "$(cat "$d/npass" 2>/dev/null || echo 0)" \
        "$(cat "$d/secs" 2>/dev/null || echo -)" "$(cat "$d/loaded" 2>/dev/null || echo -)"
    [[ "$v" == PASS ]] || failed=$((failed + 1))
done

if ((failed > 0)); then
    echo
    for prog in "${PROGRAMS[@]}"; do
        d="$LOGDIR/$prog"
        [[ "$(cat "$d/verdict" 2>/dev/null)" == PASS ]] && continue
        echo "---- $prog: FAIL"
        if [[ -f "$d/why" ]]; then
            sed 's/^/  why: /' "$d/why"
        else
            echo "  why: the run or its judgement did not finish (see $d)"
        fi
        if [[ -s "$d/bad" ]]; then
            head -n 25 "$d/bad" | sed 's/^/  line /'
            n=$(wc -l <"$d/bad")
            ((n <= 25)) || echo "  ... $((n - 25)) more in $d/log"
        fi
        if [[ -s "$d/stderr" ]] && ! grep -q . "$d/bad" 2>/dev/null; then
            tail -n 5 "$d/stderr" | sed 's/^/  stderr: /'
        fi
    done
fi

total=${#PROGRAMS[@]}
echo
echo "netlib-tests: $((total - failed)) of $total programs passed"
if ((failed > 0)); then
    echo "logs kept in $LOGDIR"
    exit 1
fi
((KEEP)) || rm -rf "$LOGDIR"
