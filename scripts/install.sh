#!/usr/bin/env bash
# Install hyblas into PREFIX (default ./stage):
#
#   lib/libhyblas.so.X.Y.Z            the library (one file)
#   lib/libhyblas.so.0, libhyblas.so  SONAME and link-time symlinks
#   lib/hyblas/libblas.so.3, libcblas.so.3, libblas.so, libcblas.so
#                                     symlinks for dropping hyblas in as the system BLAS; in a
#                                     directory of their own so they shadow nothing until asked
#                                     (LD_LIBRARY_PATH=PREFIX/lib/hyblas, update-alternatives)
#   include/hyblas.h cblas.h cblas64.h
#   lib/cmake/hyblas/hyblasConfig.cmake, hyblasConfigVersion.cmake   (find_package(hyblas))
#   lib/pkgconfig/hyblas.pc                                          (pkg-config hyblas)
#   bin/hyblas                        the command-line tool (info, demo, bench, tune)
#   the GPU kernel cache              `hyblas compile --if-gpu`: the present GPU's kernel units
#                                     (HYBLAS_CACHE_DIR; skipped without a GPU, or with
#                                     HYBLAS_NO_COMPILE=1)
#
# Runs `cargo build --release` first (a no-op when the build is current) unless
# HYBLAS_NO_BUILD=1. Honours CARGO_TARGET_DIR. Re-running over an existing prefix replaces
# the files; files of other versions of libhyblas are left alone.
# Usage: scripts/install.sh [PREFIX]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${1:-./stage}"
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
[[ "$TARGET" = /* ]] || TARGET="$ROOT/$TARGET"
REL="$TARGET/release"

if [[ "${HYBLAS_NO_BUILD:-0}" != 1 ]]; then
    (cd "$ROOT" && cargo build --release)
fi
for f in "$REL/libhyblas.so" "$REL/hyblas"; do
    [[ -f "$f" ]] || { echo "install.sh: $f is missing (build with cargo build --release)" >&2; exit 1; }
done

# The package version from Cargo.toml's [package] table.
VERSION="$(awk -F'"' '/^\[/{pkg = ($0 == "[package]")} pkg && /^version *=/{print $2; exit}' "$ROOT/Cargo.toml")"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "install.sh: cannot read the version from Cargo.toml" >&2; exit 1; }
# The SONAME build.rs gave the library (libhyblas.so.0); the installed file is named after the
# full version, as shared libraries usually are.
SONAME="$(readelf -d "$REL/libhyblas.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[[ -n "$SONAME" ]] || { echo "install.sh: $REL/libhyblas.so has no SONAME" >&2; exit 1; }
REALNAME="libhyblas.so.$VERSION"

echo "installing hyblas $VERSION into $PREFIX"
install -d "$PREFIX/lib" "$PREFIX/lib/hyblas" "$PREFIX/include" "$PREFIX/bin" \
    "$PREFIX/lib/cmake/hyblas" "$PREFIX/lib/pkgconfig"

# Library: write to a temporary name and rename, so a program using the old file keeps
# running on it (the inode stays alive) instead of crashing on a file rewritten under it.
install -m 0755 "$REL/libhyblas.so" "$PREFIX/lib/.$REALNAME.tmp"
mv -f "$PREFIX/lib/.$REALNAME.tmp" "$PREFIX/lib/$REALNAME"
ln -sfn "$REALNAME" "$PREFIX/lib/$SONAME"
[[ "$SONAME" == libhyblas.so ]] || ln -sfn "$SONAME" "$PREFIX/lib/libhyblas.so"
for name in libblas.so.3 libcblas.so.3; do
    ln -sfn "../$REALNAME" "$PREFIX/lib/hyblas/$name"
    ln -sfn "$name" "$PREFIX/lib/hyblas/${name%.3}"
done

install -m 0755 "$REL/hyblas" "$PREFIX/bin/.hyblas.tmp"
mv -f "$PREFIX/bin/.hyblas.tmp" "$PREFIX/bin/hyblas"
install -m 0644 "$ROOT/include/hyblas.h" "$ROOT/include/cblas.h" "$ROOT/include/cblas64.h" "$PREFIX/include/"

# GPU kernels: compile the present GPU's units into the kernel cache now (a line per unit), so
# that no program's first calls run on cuBLAS while they compile. Without a GPU or NVRTC this
# says so and does nothing; HYBLAS_NO_COMPILE=1 skips it. `hyblas compile --arch sm_80,sm_90`
# fills a (shared) cache for other machines.
if [[ "${HYBLAS_NO_COMPILE:-0}" != 1 ]]; then
    echo "compiling the GPU kernels for this machine (hyblas compile --if-gpu; HYBLAS_NO_COMPILE=1 skips)"
    "$PREFIX/bin/hyblas" compile --if-gpu || echo "install.sh: hyblas compile failed; kernels will compile at first use" >&2
fi

subst() { # template -> stdout
    sed -e "s|@HYBLAS_VERSION@|$VERSION|g" -e "s|@HYBLAS_SONAME@|$SONAME|g" \
        -e "s|@HYBLAS_REALNAME@|$REALNAME|g" -e "s|@PREFIX@|$PREFIX|g" "$1"
}
subst "$ROOT/cmake/hyblasConfig.cmake.in" >"$PREFIX/lib/cmake/hyblas/hyblasConfig.cmake"
subst "$ROOT/cmake/hyblasConfigVersion.cmake.in" >"$PREFIX/lib/cmake/hyblas/hyblasConfigVersion.cmake"
subst "$ROOT/cmake/hyblas.pc.in" >"$PREFIX/lib/pkgconfig/hyblas.pc"

cat <<EOF
installed:
  $PREFIX/lib/$REALNAME  (+ $SONAME, libhyblas.so)
  $PREFIX/lib/hyblas/{libblas.so.3,libcblas.so.3,libblas.so,libcblas.so} -> ../$REALNAME
  $PREFIX/include/{hyblas.h,cblas.h,cblas64.h}
  $PREFIX/lib/cmake/hyblas/hyblasConfig.cmake, $PREFIX/lib/pkgconfig/hyblas.pc
  $PREFIX/bin/hyblas
use:
  cmake -DCMAKE_PREFIX_PATH=$PREFIX ...                      (find_package(hyblas))
  PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs hyblas
  LD_LIBRARY_PATH=$PREFIX/lib/hyblas <program linked with -lblas or -lcblas>
  LD_PRELOAD=$PREFIX/lib/$SONAME <any BLAS program>
EOF
