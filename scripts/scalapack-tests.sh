#!/usr/bin/env bash
# Run Debian's ScaLAPACK test programs (package scalapack-mpi-test, the Open MPI build) under
# mpirun with the BLAS in LIBDIR as the BLAS of every rank, and judge each by its output.
#
# LIBDIR is an installed hyblas's lib/hyblas (LIBDIR/libblas.so.3 -> libhyblas). The testers
# link libblas.so.3 and liblapack.so.3, which the alternatives system points at OpenBLAS's
# where that is installed.
# Every rank runs with LD_LIBRARY_PATH=<logs>/lib (passed with mpirun -x), a directory where
#   libblas.so.3   -> LIBDIR/libblas.so.3              (the library under test)
#   liblapack.so.3 -> the reference LAPACK (liblapack3) (SCALAPACK_LAPACK)
# The reference LAPACK, not OpenBLAS's: OpenBLAS's liblapack.so.3 brings libopenblas.so.0 into
# the process and does its own DGETRF/DPOTRF/DLASWP/DTRTRI (ScaLAPACK calls those on its local
# blocks) with OpenBLAS's kernels; the reference LAPACK does every flop through BLAS calls, all
# of which then land in the library under test. One thread per rank (HYBLAS_NUM_THREADS=1,
# OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1): the ranks are the parallelism, and 4 ranks already
# oversubscribe a 2-core machine (--oversubscribe --bind-to none).
#
# Programs (default: the d and z ones below, 39 in all: 55 s on an idle 2-core machine with 4
# ranks). All use the shipped inputs, unchanged but for one line: every input's process grids
# need at most 4 ranks (larger ones the tester skips itself) and each default program takes
# seconds, so nothing was reduced; the Cholesky testers (x?llt) run with condition estimation
# off, which deadlocks upstream, and the symmetric eigensolver testers (x?sep) without one
# process grid of TEST 7, whose orthogonality check passes or fails from run to run with any
# BLAS (see run_one).
#   xdlu xdqr xdllt xdinv xdls           LU, QR/QL/LQ/RQ/QP/TZ, Cholesky, inverse, least squares
#   xddblu xddtlu xdgblu xdpbllt xdptllt banded and tridiagonal LU and Cholesky
#   xdbrd xdhrd xdtrd xdsep xdgsep xdnep reductions (bidiagonal, Hessenberg, tridiagonal) and
#                                        the symmetric, generalized and nonsymmetric eigensolvers
#   dpb1tst dpb2tst dpb3tst              the PBLAS Level 1, 2 and 3 testers (PBLAS/)
#   and the z ones: the same, plus xzevc (eigenvectors).
# Not in the list (name them to run them): xdsyevr and xzheevr, which make about 30 million
# BLAS calls each, nearly all tiny; the per-call trace below turns their 10-16 s into 65 s or
# more and over 2 GB of trace lines each (both passed, 136 of 136, when measured); the s and c
# programs (the same code paths in the other precisions). Not supported: xdsvd and xdhseqr
# (they print another output format).
#
# Each program runs in its own directory (logs/<program>/, with every input .dat copied in)
# under `timeout`. A program PASSES only if all of these hold:
#   - mpirun exited 0 within SCALAPACK_TIMEOUT;
#   - in every one of the NP ranks, the dynamic loader resolved libblas.so.3 to LIBDIR's
#     library and loaded no OpenBLAS (LD_DEBUG=libs of the judged run, one file per rank), and
#     the library under test traced at least one BLAS call (HYBLAS_TRACE, one file per rank: a
#     rank that ran on any other BLAS writes none);
#   - driver programs (x...): rank 0's summary is there and adds up: "Finished N tests",
#     "P tests completed and passed residual checks", "F tests completed and failed ...",
#     "S tests skipped ...", optionally "W tests completed without checking", with
#     P + W + F + S = N, F = 0, P > 0, and "END OF TESTS.";
#   - PBLAS testers (?pb?tst): every routine enabled in the input has a row in the "Testing
#     Summary" table with FAILED = 0, PASSED > 0 and PASSED + SKIPPED = TOTAL, "Error-exit
#     tests completed." when the input tests error exits, and "End of Tests.";
#   - no line of stdout or stderr contains FAILED (the PBLAS table header aside), panicked,
#     "On entry to" / "illegal value" (a BLAS or PBLAS parameter error on a valid call),
#     "Program received signal", "Segmentation fault", "symbol lookup error",
#     "error while loading shared libraries", MPI_ABORT, "BLACS ERROR".
# The traces are reduced to per-rank call counts (logs/<program>/calls.<rank>) and deleted.
# Prints a table; exits 1 if any program failed, 2 if something it needs is missing.
#
# Usage: scripts/scalapack-tests.sh LIBDIR [PROGRAM...]
#   PROGRAM: tester names like xdlu or zpb3tst to run a subset.
# Environment: SCALAPACK_NP (ranks, default 4), SCALAPACK_TIMEOUT (seconds per program,
#   default 300), SCALAPACK_LOGDIR (keep the logs there; default: a temporary directory, kept
#   when something fails), SCALAPACK_TESTS (the testers, default
#   /usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests), SCALAPACK_LAPACK (default
#   /usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3), SCALAPACK_MPIRUN_ARGS (more mpirun
#   arguments, e.g. --hostfile FILE). HYBLAS_* variables set by the caller reach every rank.
#   Across nodes, LIBDIR, the testers and the reference LAPACK must be at the same paths on
#   every node, and the log directory on a file system they share: each rank writes its loader
#   log and trace there, and a rank whose files are missing fails the check.
set -uo pipefail
export LC_ALL=C

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
    usage
    exit 2
fi
[[ -d "$1" ]] || { echo "scalapack-tests: $1 is not a directory" >&2; exit 2; }
LIBDIR="$(cd "$1" && pwd)"
shift
TESTS="${SCALAPACK_TESTS:-/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests}"
LAPACK="${SCALAPACK_LAPACK:-/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3}"
NP="${SCALAPACK_NP:-4}"
TIMEOUT="${SCALAPACK_TIMEOUT:-300}"
read -r -a EXTRA_ARGS <<<"${SCALAPACK_MPIRUN_ARGS:-}"

# What is needed, and the Debian package that brings it (scripts/setup.sh installs them all).
if [[ ! -e "$LIBDIR/libblas.so.3" ]]; then
    echo "scalapack-tests: $LIBDIR/libblas.so.3 does not exist (scripts/install.sh PREFIX makes PREFIX/lib/hyblas)" >&2
    exit 2
fi
WANT_LIB="$(readlink -f "$LIBDIR/libblas.so.3")"
missing=()
[[ -x "$TESTS/xdlu" ]] || missing+=("the ScaLAPACK testers in $TESTS (apt-get install scalapack-mpi-test)")
if ! command -v mpirun >/dev/null 2>&1; then
    missing+=("mpirun (apt-get install openmpi-bin)")
elif ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    # The testers in openmpi-tests are linked with Open MPI; another mpirun cannot start them.
    missing+=("Open MPI's mpirun: $(command -v mpirun) is $(mpirun --version 2>&1 | head -n 1)"
        "  (apt-get install openmpi-bin; update-alternatives --config mpirun)")
fi
[[ -e "$LAPACK" ]] || missing+=("the reference LAPACK $LAPACK (apt-get install liblapack3)")
command -v timeout >/dev/null 2>&1 || missing+=("timeout (apt-get install coreutils)")
if ((${#missing[@]} > 0)); then
    echo "scalapack-tests: cannot run; missing:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    echo "scripts/setup.sh installs them (Debian/Ubuntu: apt-get install scalapack-mpi-test openmpi-bin liblapack3)" >&2
    exit 2
fi

if [[ $# -gt 0 ]]; then
    PROGRAMS=("$@")
else
    PROGRAMS=()
    for p in d z; do
        PROGRAMS+=("x${p}lu" "x${p}qr" "x${p}llt" "x${p}inv" "x${p}ls" "x${p}dblu" "x${p}dtlu" "x${p}gblu"
            "x${p}pbllt" "x${p}ptllt" "x${p}brd" "x${p}hrd" "x${p}trd" "x${p}sep" "x${p}gsep")
        PROGRAMS+=("x${p}nep")
        [[ $p == d ]] || PROGRAMS+=(xzevc)
        PROGRAMS+=("${p}pb1tst" "${p}pb2tst" "${p}pb3tst")
    done
fi

if [[ -n "${SCALAPACK_LOGDIR:-}" ]]; then
    LOGDIR="$SCALAPACK_LOGDIR"
    mkdir -p "$LOGDIR" || exit 2
    KEEP=1
else
    LOGDIR="$(mktemp -d "${TMPDIR:-/tmp}/hyblas-scalapack.XXXXXX")" || exit 2
    KEEP=0
fi
LOGDIR="$(cd "$LOGDIR" && pwd)"

# The directory every rank finds libblas.so.3 and liblapack.so.3 in.
RUNLIB="$LOGDIR/lib"
rm -rf "$RUNLIB"
mkdir -p "$RUNLIB"
ln -sfn "$LIBDIR/libblas.so.3" "$RUNLIB/libblas.so.3"
ln -sfn "$LAPACK" "$RUNLIB/liblapack.so.3"

MPIRUN=(mpirun -np "$NP" --oversubscribe --bind-to none)
# Open MPI refuses to start as root unless told (containers and CI runners often are root).
[[ "$(id -u)" -ne 0 ]] || MPIRUN+=(--allow-run-as-root)
export LD_LIBRARY_PATH="$RUNLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HYBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# -x: export to every rank, on every node (a local rank would inherit them anyway; remote ones
# only get what -x names). HYBLAS_TRACE is set per rank by the wrapper below, not here.
MPIRUN+=(-x LD_LIBRARY_PATH -x HYBLAS_NUM_THREADS -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS)
while IFS='=' read -r name _; do
    [[ "$name" == HYBLAS_TRACE ]] || MPIRUN+=(-x "$name")
done < <(env | grep -E '^HYBLAS_[A-Z0-9_]*=' | grep -v '^HYBLAS_NUM_THREADS=')
MPIRUN+=("${EXTRA_ARGS[@]}")

# The tester's path, or nothing for an unknown name.
path_of() {
    if [[ "$1" =~ ^[sdcz]pb[123]tst$ ]]; then
        [[ -x "$TESTS/PBLAS/$1" ]] && echo "$TESTS/PBLAS/$1"
    else
        [[ -x "$TESTS/$1" && "$1" == x* ]] && echo "$TESTS/$1"
    fi
}

# Run one program; writes $dir/{stdout,stderr,rc,secs} and, through judge, the verdict files.
run_one() {
    local prog="$1" dir="$LOGDIR/$1" exe rc start end
    rm -rf "$dir"
    mkdir -p "$dir"
    exe="$(path_of "$prog")"
    if [[ -z "$exe" ]]; then
        printf 'FAIL\n' >"$dir/verdict"
        echo "no tester named $prog in $TESTS or $TESTS/PBLAS" >"$dir/why"
        return
    fi
    cp "$TESTS"/*.dat "$TESTS"/PBLAS/*.dat "$dir/"
    if [[ "$prog" == x?llt ]]; then
        # The Cholesky testers' condition estimation and refinement (PxPOCON, PxPORFS) are
        # off: PxLACON deadlocks across ranks at some timings, with any BLAS (upstream
        # Reference-ScaLAPACK/scalapack#121; here xdllt hung with the reference netlib BLAS 3
        # of 3 times and with hyblas of session 63 4 of 4 times beside a busy loop, and 4 of 10
        # times on an idle machine once small products got faster). The factorization and
        # the solves are still tested.
        sed -i 's/^T\( *(T or F) Test Cond\)/F\1/' "$dir/LLT.dat"
    fi
    if [[ "$prog" == x?sep ]]; then
        # TEST 7 of the symmetric eigensolver testers runs without its 7th process grid
        # (P = 3, Q = 1, NB = 1): there the orthogonality of PxSYEVX's eigenvectors, ||Q^T Q -
        # I|| / (N eps), is not repeatable from run to run with the same BLAS and inputs (on
        # this 2-core machine, 4 ranks, with the reference netlib BLAS: 0.52 to 100 against
        # the threshold 50, failing 6 of 14 runs; with hyblas 0.47 to 56, failing 1 of 13; with
        # OpenBLAS 0.55-0.86 in 8 runs), also with address randomization off. The inverse
        # iteration behind it guarantees no such bound (Reference-LAPACK/lapack#1350, #1346:
        # the same limit in LAPACK's own SEP tests). The other 12 grids keep the threshold.
        awk '/^.TEST 7 /{t=1} /^.TEST 8 /{t=0}
             t && /number of processor configurations/ {sub(/^13/, "12")}
             t && /values of (P|Q|NB)/ {n=split($0, f, /[ \t]+/); line=""; k=0
                 for (i = 1; i <= n; i++) if (f[i] != "") { k++; if (k != 7) line = line f[i] " " }
                 $0 = line}
             {print}' "$dir/SEP.dat" >"$dir/SEP.dat.new" && mv "$dir/SEP.dat.new" "$dir/SEP.dat"
    fi
    start=$(date +%s.%N)
    # Each rank: LD_DEBUG to its own file and its own HYBLAS_TRACE, named by its rank
    # (OMPI_COMM_WORLD_RANK), set by a shell that then execs the tester, so that they cover
    # exactly the tester.
    (
        cd "$dir" || exit 1
        exec </dev/null
        # shellcheck disable=SC2016 # expanded by each rank's shell, not here
        timeout --kill-after=10 "$TIMEOUT" "${MPIRUN[@]}" sh -c \
            'r="${OMPI_COMM_WORLD_RANK:-p$$}"; LD_DEBUG=libs LD_DEBUG_OUTPUT="$0/ld.$r" HYBLAS_TRACE="$0/trace.$r" exec "$1"' \
            "$dir" "$exe" >stdout 2>stderr
    )
    rc=$?
    end=$(date +%s.%N)
    echo "$rc" >"$dir/rc"
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/secs"
    judge "$prog" "$dir" "$rc"
}

# Per rank: where libblas.so.3 came from, whether OpenBLAS was loaded, the calls traced.
check_ranks() {
    local dir="$1" r ldf loaded calls good=0 whyr=()
    for ((r = 0; r < NP; r++)); do
        ldf=("$dir"/ld."$r".*)
        if [[ ! -e "${ldf[0]}" ]]; then
            whyr+=("rank $r: no loader log (did it start?)")
            continue
        fi
        # The last file tried in the search for libblas.so.3 is the one loaded.
        loaded="$(cat "${ldf[@]}" | awk '
            /find library=libblas\.so\.3 / { s = 1; next }
            s && /trying file=/ { sub(/.*trying file=/, ""); f = $0; next }
            s && /^[ \t]*[0-9]+:[ \t]*$/ { s = 0 }
            END { print f }')"
        echo "${loaded:-?}" >"$dir/loaded.$r"
        calls=0
        if [[ -f "$dir/trace.$r" ]]; then
            # Calls per routine, most first; the raw trace (megabytes) is not kept.
            awk '$1 == "hyblas:" { n[$2]++ } END { for (k in n) print n[k], k }' "$dir/trace.$r" | sort -rn >"$dir/calls.$r"
            calls=$(awk '{ s += $1 } END { print s + 0 }' "$dir/calls.$r")
            rm -f "$dir/trace.$r"
        fi
        if [[ -z "$loaded" || "$(readlink -f "$loaded")" != "$WANT_LIB" ]]; then
            whyr+=("rank $r: libblas.so.3 resolved to '${loaded:-nothing}', not $LIBDIR/libblas.so.3 -> $WANT_LIB")
        elif grep -qE 'calling init: .*openblas' "${ldf[@]}"; then
            whyr+=("rank $r: OpenBLAS was loaded too: $(grep -ohE 'calling init: .*openblas[^ ]*' "${ldf[@]}" | head -n 1)")
        elif ((calls == 0)); then
            whyr+=("rank $r: $WANT_LIB traced no call (HYBLAS_TRACE): another BLAS did the work, or it is not hyblas")
        else
            good=$((good + 1))
        fi
        echo "$calls" >>"$dir/calls.total"
        # Keep only what the loader said about the BLAS and LAPACK libraries.
        grep -hE 'find library=lib(blas|lapack|openblas)|calling init: .*(blas|lapack)' "${ldf[@]}" >"$dir/ld-blas.$r" || true
        rm -f "${ldf[@]}"
    done
    echo "$good" >"$dir/goodranks"
    printf '%s\n' "${whyr[@]+"${whyr[@]}"}" | sed '/^$/d' >"$dir/why.ranks"
}

judge() {
    local prog="$1" dir="$2" rc="$3" why=() passed=- failed=- skipped=- nochk=-
    rm -f "$dir/calls.total"
    check_ranks "$dir"
    [[ -s "$dir/why.ranks" ]] && mapfile -t -O 0 why <"$dir/why.ranks"
    awk '{ s += $1 } END { print s + 0 }' "$dir/calls.total" >"$dir/calls"

    case "$rc" in
        0) ;;
        124 | 137) why+=("timed out after ${TIMEOUT}s") ;;
        *)
            if ((rc > 128)); then why+=("exit status $rc (signal $((rc - 128)))"); else why+=("exit status $rc"); fi
            ;;
    esac

    local bad='FAILED|panicked|On entry to|illegal value|Program received signal|Segmentation fault'
    bad+='|symbol lookup error|error while loading shared libraries|MPI_ABORT|BLACS ERROR'
    cat "$dir/stdout" "$dir/stderr" | grep -nE "$bad" | grep -vE 'SUBROUTINE +TOTAL TESTS +PASSED +FAILED' >"$dir/bad"
    [[ -s "$dir/bad" ]] && why+=("$(wc -l <"$dir/bad") offending line(s)")

    local out="$dir/stdout"
    if [[ "$prog" =~ ^([sdcz])pb([123])tst$ ]]; then
        # PBLAS: the "Testing Summary" table, one row per routine tested.
        local dat routines r row total p f s errexit
        dat="$dir/P${BASH_REMATCH[1]^^}BLAS${BASH_REMATCH[2]}TST.dat"
        routines="$(awk '$1 ~ /^P[SDCZ][A-Z0-9]+$/ && $2 == "T" { print $1 }' "$dat")"
        errexit="$(awk '/T to test error exits/ { print $1 }' "$dat")"
        [[ -n "$routines" ]] || why+=("no routines enabled in $(basename "$dat")")
        passed=0 failed=0 skipped=0
        for r in $routines; do
            row="$(grep -E "^ *\| +$r +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ *$" "$out" | tail -n 1)"
            if [[ -z "$row" ]]; then
                why+=("no summary row for $r")
                continue
            fi
            read -r _ _ total p f s <<<"$row"
            passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
            ((f == 0 && p > 0 && p + s == total)) || why+=("$r: $total tests, $p passed, $f failed, $s skipped")
        done
        [[ "$errexit" != T ]] || grep -q 'Error-exit tests completed\.' "$out" || why+=("no 'Error-exit tests completed.'")
        grep -q 'End of Tests\.' "$out" || why+=("no 'End of Tests.'")
    else
        # Drivers: rank 0 prints one summary for the whole run.
        local n p w f s
        count() { grep -cE "$1" "$out"; }
        n="$(sed -nE 's/^ *Finished +([0-9]+) tests, with the following results:.*/\1/p' "$out")"
        p="$(sed -nE 's/^ *([0-9]+) tests completed and passed residual checks\..*/\1/p' "$out")"
        w="$(sed -nE 's/^ *([0-9]+) tests completed without checking\..*/\1/p' "$out")"
        f="$(sed -nE 's/^ *([0-9]+) tests completed and failed( residual checks)?\..*/\1/p' "$out")"
        s="$(sed -nE 's/^ *([0-9]+) tests skipped (because of illegal input values|for lack of memory)\..*/\1/p' "$out")"
        if [[ "$n" =~ ^[0-9]+$ && "$p" =~ ^[0-9]+$ && "$f" =~ ^[0-9]+$ && "$s" =~ ^[0-9]+$ && "$w" =~ ^[0-9]*$ ]]; then
            passed=$p failed=$f skipped=$s nochk=${w:-0}
            ((p + nochk + f + s == n)) || why+=("summary does not add up: $n tests, $p passed, $nochk unchecked, $f failed, $s skipped")
            ((f == 0)) || why+=("$f tests failed")
            ((p > 0)) || why+=("no test passed")
        else
            # Missing, repeated or reworded lines: the run did not finish as a tester should.
            local lines
            lines="Finished $(count 'Finished +[0-9]+ tests'), passed $(count 'completed and passed')"
            lines+=", failed $(count 'completed and failed'), skipped $(count 'tests skipped')"
            why+=("no complete summary (lines: $lines)")
        fi
        grep -q 'END OF TESTS\.' "$out" || why+=("no 'END OF TESTS.'")
    fi
    printf '%s\n' "$passed" "$failed" "$skipped" "$nochk" >"$dir/counts"
    if ((${#why[@]} == 0)); then
        echo PASS >"$dir/verdict"
        : >"$dir/why"
    else
        echo FAIL >"$dir/verdict"
        printf '%s\n' "${why[@]}" >"$dir/why"
    fi
}

echo "ScaLAPACK tests: $TESTS, $NP ranks ($(mpirun --version 2>&1 | head -n 1)), logs in $LOGDIR"
echo "every rank: LD_LIBRARY_PATH=$RUNLIB (libblas.so.3 -> $WANT_LIB, liblapack.so.3 -> $(readlink -f "$LAPACK")), HYBLAS_NUM_THREADS=1"
T0=$(date +%s)
for prog in "${PROGRAMS[@]}"; do
    run_one "$prog"
    printf '  %-9s %s %6s\n' "$prog" "$(cat "$LOGDIR/$prog/verdict")" "$(cat "$LOGDIR/$prog/secs" 2>/dev/null || echo -)"
done

failed=0
printf '\n%-9s %-7s %6s %6s %7s %6s %7s %6s %9s\n' program verdict passed failed skipped nochk seconds ranks "calls"
for prog in "${PROGRAMS[@]}"; do
    d="$LOGDIR/$prog"
    v="$(cat "$d/verdict" 2>/dev/null || echo FAIL)"
    c=(- - - -)
    [[ -f "$d/counts" ]] && mapfile -t c <"$d/counts"
    printf '%-9s %-7s %6s %6s %7s %6s %7s %6s %9s\n' "$prog" "$v" "${c[0]}" "${c[1]}" "${c[2]}" "${c[3]}" \
        "$(cat "$d/secs" 2>/dev/null || echo -)" "$(cat "$d/goodranks" 2>/dev/null || echo 0)/$NP" "$(cat "$d/calls" 2>/dev/null || echo 0)"
    [[ "$v" == PASS ]] || failed=$((failed + 1))
done
echo "(passed/failed/skipped/nochk: the tester's own counts, tests or PBLAS cases; ranks: ranks that ran on"
echo " $WANT_LIB and no OpenBLAS; calls: BLAS calls the library traced, all ranks)"

if ((failed > 0)); then
    echo
    for prog in "${PROGRAMS[@]}"; do
        d="$LOGDIR/$prog"
        [[ "$(cat "$d/verdict" 2>/dev/null)" == PASS ]] && continue
        echo "---- $prog: FAIL"
        sed 's/^/  why: /' "$d/why" 2>/dev/null || echo "  why: the run or its judgement did not finish (see $d)"
        if [[ -s "$d/bad" ]]; then
            head -n 25 "$d/bad" | sed 's/^/  line /'
            n=$(wc -l <"$d/bad")
            ((n <= 25)) || echo "  ... $((n - 25)) more in $d/stdout, $d/stderr"
        fi
        [[ -s "$d/stderr" ]] && grep -vE 'floating-point exceptions are signalling' "$d/stderr" | tail -n 5 | sed 's/^/  stderr: /'
    done
fi

total=${#PROGRAMS[@]}
echo
echo "scalapack-tests: $((total - failed)) of $total programs passed in $(($(date +%s) - T0))s ($NP ranks)"
if ((failed > 0)); then
    echo "logs kept in $LOGDIR"
    exit 1
fi
((KEEP)) || rm -rf "$LOGDIR"
exit 0
