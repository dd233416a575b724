#!/usr/bin/env bash
# Every test of hyblas, in order, as CI runs them (.ci/run calls exactly this). First
# scripts/setup.sh installs the system packages the stages need where they are missing (Debian or
# Ubuntu, root or password-less sudo; elsewhere it names them and the run stops):
#
#   build         cargo build --release
#   header-drift  git diff --exit-code include/   (build.rs regenerates hyblas.h; it must be committed)
#   headers       scripts/check-headers.sh        (cblas.h/cblas64.h: strict C/C++ compiles, reference prototypes)
#   readme        scripts/check-readme.sh         (every README command run here or found where CI runs it; paths, variables)
#   fmt           cargo fmt --check               (when rustfmt is installed)
#   clippy        cargo clippy --release --all-targets -- -D warnings   (when clippy is installed)
#   layers        python3 scripts/layers.py src abi plan hybrid gpu cpu trace config,types
#                 (each module of the crate uses only those below it; docs/design.md)
#   cargo-test    cargo test --release   (GPU tests print SKIPPED where there is no GPU)
#   kernels       every kernels/*.cu compiled by the real NVRTC for sm_90 (scripts/nvrtc-local.sh
#                 fetches NVIDIA's NVRTC wheel; no GPU needed)
#   netlib-judge  scripts/netlib-tests.sh on the reference libblas.so.3: all 24 must pass, so the
#                 judge itself is known to work on this machine
#   install       scripts/install.sh $STAGE
#   exports       scripts/check-exports.sh        (the full reference ABI, LP64 + ILP64)
#   ctest         CMake: configure ctest/ against $STAGE, build, run (C, Fortran, drop-in programs)
#   netlib        scripts/netlib-tests.sh $STAGE/lib/hyblas   (the 24 netlib BLAS test programs)
#   scalapack     scripts/scalapack-tests.sh $STAGE/lib/hyblas   (Debian's ScaLAPACK and PBLAS
#                 testers, 4 Open MPI ranks, hyblas the BLAS of every rank; docs/scalapack.md)
#
# A failed stage does not stop the others, except that stages needing the library are not run
# when the build failed (they count as failed). Logs go to build/test-all/<stage>.log. The last
# line is "N passed, N failed"; the exit status is 0 only if every stage passed.
#
# Usage: scripts/test-all.sh [--no-setup] [--no-clippy] [--only STAGE[,STAGE...]]
# Environment: HYBLAS_STAGE (install prefix, default ./stage).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="${HYBLAS_STAGE:-$ROOT/stage}"
LOGS="$ROOT/build/test-all"
CTEST_BUILD="$ROOT/build/ctest"
mkdir -p "$LOGS"

want_clippy=1
want_setup=1
only=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --no-clippy) want_clippy=0 ;;
        --no-setup) want_setup=0 ;;
        --only) only=",$2,"; shift ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "test-all: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

if [[ $want_setup -eq 1 ]]; then
    scripts/setup.sh || { echo "test-all: the machine is not set up (scripts/setup.sh above); nothing was run" >&2; exit 1; }
fi

names=()
results=()
times=()
passed=0
failed=0
skipped=0
T0=$(date +%s)

record() { # name result seconds
    names+=("$1")
    results+=("$2")
    times+=("$3")
    case "$2" in
        passed) passed=$((passed + 1)) ;;
        skipped*) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)) ;;
    esac
}

# stage NAME CMD...: run CMD with output to the terminal and build/test-all/NAME.log.
stage() {
    local name="$1"
    shift
    if [[ -n "$only" && "$only" != *",$name,"* ]]; then
        return 0
    fi
    echo
    echo "==================== $name: $* ===================="
    local t0 rc
    t0=$(date +%s)
    "$@" 2>&1 | tee "$LOGS/$name.log"
    rc=${PIPESTATUS[0]}
    local dt=$(($(date +%s) - t0))
    if [[ $rc -eq 0 ]]; then
        record "$name" passed "$dt"
    else
        record "$name" "FAILED (exit $rc)" "$dt"
    fi
    echo "==================== $name: $([[ $rc -eq 0 ]] && echo passed || echo "FAILED (exit $rc)") in ${dt}s"
    return "$rc"
}

skip() { # name why
    if [[ -n "$only" && "$only" != *",$1,"* ]]; then
        return 0
    fi
    echo
    echo "==================== $1: $2"
    record "$1" "$2" 0
}

header_drift() {
    # A CI checkout may belong to another user than the one running the tests.
    git() { command git -c safe.directory="$ROOT" "$@"; }
    if ! git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        echo "not a git checkout: cannot compare include/ with the committed headers"
        return 1
    fi
    # Untracked headers count as drift too: build.rs output must be committed.
    local untracked
    untracked="$(git -C "$ROOT" ls-files --others --exclude-standard -- include/)"
    if [[ -n "$untracked" ]]; then
        echo "untracked files in include/ (commit them):"
        echo "$untracked"
        return 1
    fi
    git -C "$ROOT" --no-pager diff --exit-code --stat HEAD -- include/ && git -C "$ROOT" --no-pager diff --exit-code HEAD -- include/ &&
        echo "include/ matches the committed headers"
}

kernels_stage() {
    local env
    env="$(scripts/nvrtc-local.sh)" || {
        echo "could not fetch NVRTC (scripts/nvrtc-local.sh)"
        return 1
    }
    eval "$env"
    HYBLAS_REQUIRE_NVRTC=1 cargo test --release --test gpu_compile -- --nocapture
}

ctest_stage() {
    rm -rf "$CTEST_BUILD"
    cmake -S "$ROOT/ctest" -B "$CTEST_BUILD" -G "Unix Makefiles" -DCMAKE_PREFIX_PATH="$STAGE" -DCMAKE_BUILD_TYPE=RelWithDebInfo ||
        return 1
    # -k: a program that fails to build fails its own test ("Not Run"), the others still run.
    local build_rc=0
    cmake --build "$CTEST_BUILD" -j "$(nproc)" -- -k || build_rc=$?
    local test_rc=0
    ctest --test-dir "$CTEST_BUILD" --output-on-failure --timeout 300 || test_rc=$?
    [[ $build_rc -eq 0 && $test_rc -eq 0 ]]
}

netlib_judge() {
    local ref=/usr/lib/x86_64-linux-gnu/blas/libblas.so.3 dir
    dir="$ROOT/build/netlib-reference"
    mkdir -p "$dir"
    ln -sfn "$ref" "$dir/libblas.so.3"
    NETLIB_LOGDIR="$LOGS/netlib-judge" scripts/netlib-tests.sh "$dir"
}

have_cargo_sub() { cargo "$1" --version >/dev/null 2>&1; }

build_ok=1
stage build cargo build --release || build_ok=0
stage header-drift header_drift
stage headers scripts/check-headers.sh
stage readme scripts/check-readme.sh
if have_cargo_sub fmt; then
    stage fmt cargo fmt --all -- --check
else
    skip fmt "skipped (rustfmt not installed)"
fi
if [[ $want_clippy -eq 0 ]]; then
    skip clippy "skipped (--no-clippy)"
elif have_cargo_sub clippy; then
    stage clippy cargo clippy --release --all-targets -- -D warnings
else
    skip clippy "skipped (clippy not installed)"
fi
stage layers python3 scripts/layers.py src abi plan hybrid gpu cpu trace config,types
stage cargo-test cargo test --release
stage kernels kernels_stage
if [[ -e /usr/lib/x86_64-linux-gnu/blas/libblas.so.3 ]]; then
    stage netlib-judge netlib_judge
else
    skip netlib-judge "skipped (no reference /usr/lib/x86_64-linux-gnu/blas/libblas.so.3)"
fi
if [[ $build_ok -eq 1 ]]; then
    install_ok=1
    stage install env HYBLAS_NO_BUILD=1 scripts/install.sh "$STAGE" || install_ok=0
    stage exports scripts/check-exports.sh "$ROOT/target/release/libhyblas.so"
    if [[ $install_ok -eq 1 ]]; then
        stage ctest ctest_stage
        stage netlib env NETLIB_LOGDIR="$LOGS/netlib" scripts/netlib-tests.sh "$STAGE/lib/hyblas"
        stage scalapack env SCALAPACK_LOGDIR="$LOGS/scalapack" scripts/scalapack-tests.sh "$STAGE/lib/hyblas"
    else
        for s in ctest netlib scalapack; do
            if [[ -z "$only" || "$only" == *",$s,"* ]]; then record "$s" "not run (install failed)" 0; fi
        done
    fi
else
    for s in install exports ctest netlib scalapack; do
        if [[ -z "$only" || "$only" == *",$s,"* ]]; then record "$s" "not run (build failed)" 0; fi
    done
fi

echo
echo "==================== summary ($(($(date +%s) - T0))s, logs in ${LOGS#"$ROOT"/})"
for i in "${!names[@]}"; do
    printf '  %-13s %-28s %5ss\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
((skipped == 0)) || echo "($skipped skipped: see above)"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
