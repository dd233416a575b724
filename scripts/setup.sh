#!/usr/bin/env bash
# Make sure this machine has what scripts/test-all.sh needs besides Rust, installing what is
# missing where it can. test-all.sh runs this first (skip with --no-setup).
#
# On Debian or Ubuntu (dpkg and apt-get; root, or sudo without a password) the packages below
# that are not installed are installed with apt-get. Elsewhere, or without the rights, it names
# exactly what is missing and exits with status 1.
#
# What the packages are for:
#   build-essential, binutils   the C compiler, make, nm/readelf (export and header checks)
#   gfortran, cmake, pkg-config the ctest programs (C, C++, Fortran callers built by CMake)
#   python3, python3-pip        the layer check; NVIDIA's NVRTC wheel for the kernel check
#   git, curl, ca-certificates  the header-drift stage; the NVRTC download
#   libblas3, libblas-dev       the reference BLAS (the netlib judge, the export list, cblas.h)
#   libblas-test                the 24 netlib BLAS test programs and their inputs
#   libopenblas0-pthread        OpenBLAS, the peer the CPU benchmarks compare against
#   scalapack-mpi-test          the ScaLAPACK and PBLAS test programs and inputs (scalapack stage)
#   openmpi-bin, liblapack3     mpirun for them (Open MPI); the reference LAPACK every rank
#                               loads, so that all of its BLAS calls go to hyblas
#
# Usage: scripts/setup.sh [--check]   (--check: install nothing, only report)
set -uo pipefail

PACKAGES=(build-essential binutils gfortran cmake pkg-config python3 python3-pip git curl ca-certificates
    libblas3 libblas-dev libblas-test libopenblas0-pthread scalapack-mpi-test openmpi-bin liblapack3)
# The commands the stages call, for machines without dpkg.
COMMANDS=(cc make nm readelf gfortran cmake pkg-config python3 git curl mpirun)

check_only=0
[[ "${1:-}" == "--check" ]] && check_only=1

if command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        echo "setup: every package the tests need is installed"
        exit 0
    fi
    echo "setup: missing Debian packages: ${missing[*]}"
    if [[ $check_only -eq 1 ]]; then
        exit 1
    fi
    sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo)
        else
            echo "setup: not root and no password-less sudo: install them with" >&2
            echo "  sudo apt-get install ${missing[*]}" >&2
            exit 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q && "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" || {
        echo "setup: apt-get failed; install them by hand: ${missing[*]}" >&2
        exit 1
    }
    echo "setup: installed ${missing[*]}"
    exit 0
fi

# Not Debian: the commands can be checked, the netlib test programs cannot.
missing=()
for c in "${COMMANDS[@]}"; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
done
echo "setup: not a Debian/Ubuntu system. The tests need the commands ${COMMANDS[*]}" >&2
[[ ${#missing[@]} -gt 0 ]] && echo "setup: missing commands: ${missing[*]}" >&2
echo "setup: and the reference BLAS (libblas.so.3), its 24 netlib test programs with their inputs" >&2
echo "  (Debian's libblas-test layout under /usr/lib/x86_64-linux-gnu/blas, or NETLIB_DIR) and OpenBLAS" >&2
echo "  (libopenblas.so.0), and for the scalapack stage Debian's ScaLAPACK testers for Open MPI (SCALAPACK_TESTS)," >&2
echo "  Open MPI's mpirun and the reference LAPACK (SCALAPACK_LAPACK). Install them, then run" >&2
echo "  scripts/test-all.sh --no-setup." >&2
exit 1
