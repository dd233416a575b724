#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12, as a new user would type them (issue 46).
#
# Builds a minimal Debian 12 (bookworm) tree with debootstrap (variant minbase, plus git, curl,
# ca-certificates and gcc: Rust's linker, which rustup's installer asks for), installs Rust with
# rustup's standard command, clones this repository's HEAD into it, and runs inside it with
# chroot, timing each:
#   cargo run --release --bin hyblas -- demo
#   scripts/test-all.sh
# Nothing else is installed by hand: the test command installs what its stages need itself
# (scripts/setup.sh, apt-get as root). Needs root (debootstrap, mounts, chroot) and network
# access to deb.debian.org, static.rust-lang.org and crates.io. Takes 30-50 minutes on 2 cores.
#
# Usage: sudo scripts/fresh-debian.sh [DIR]   (default /tmp/hyblas-fresh, removed first)
# Writes DIR.log (everything) and prints each command's wall time and exit status at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
DIR=${1:-/tmp/hyblas-fresh}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [[ $(id -u) -ne 0 ]]; then
    echo "fresh-debian: needs root (debootstrap, mount, chroot)" >&2
    exit 2
fi
if ! command -v debootstrap >/dev/null; then
    echo "== installing debootstrap"
    apt-get install -y -q debootstrap >/dev/null || { echo "fresh-debian: could not install debootstrap" >&2; exit 2; }
fi

mounts=()
cleanup() {
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null; done
}
trap cleanup EXIT
mnt() { # type-or-bind source target
    mkdir -p "$3"
    if [[ $1 == bind ]]; then mount --bind "$2" "$3"; else mount -t "$1" "$2" "$3"; fi && mounts+=("$3")
}

cleanup_tree() {
    for m in proc sys dev/pts dev/shm dev src; do umount -l "$DIR/$m" 2>/dev/null; done
    rm -rf "$DIR"
}
cleanup_tree
s=$SECONDS
echo "== debootstrap bookworm (minbase + git curl ca-certificates gcc) into $DIR"
debootstrap --variant=minbase --include=git,curl,ca-certificates,gcc,libc6-dev bookworm "$DIR" "$MIRROR" \
    > "$DIR.debootstrap.log" 2>&1 || { echo "fresh-debian: debootstrap failed, see $DIR.debootstrap.log" >&2; exit 1; }
echo "   $((SECONDS - s)) s"
cp /etc/resolv.conf "$DIR/etc/resolv.conf"
# /etc/hosts as a container runtime writes it (debootstrap leaves none): without the host's name
# in it every lookup of it (Open MPI's start, 39 times in the scalapack stage) waits 10 s for DNS.
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$(hostname)" > "$DIR/etc/hosts"
# This machine's own CA certificates (a network whose TLS goes through a proxy needs them; a
# fresh machine on that network would be given them too). Nothing else is copied in.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$DIR/usr/local/share/ca-certificates/"
    chroot "$DIR" update-ca-certificates >/dev/null 2>&1
fi
mnt proc proc "$DIR/proc"
mnt sysfs sys "$DIR/sys"
mnt bind /dev "$DIR/dev"
mnt devpts devpts "$DIR/dev/pts"
mnt tmpfs tmpfs "$DIR/dev/shm"
mnt bind "$REPO" "$DIR/src"

# Inside: rustup's standard installer (default profile: rustc, cargo, clippy, rustfmt), a clone
# of the repository, then the README's two commands exactly as written there.
cat > "$DIR/root/fresh.sh" <<'EOF'
set -uo pipefail
export HOME=/root DEBIAN_FRONTEND=noninteractive
cd /root
t=$SECONDS
# (rustup-init itself, which https://sh.rustup.rs downloads: that name does not resolve on every
# network that reaches static.rust-lang.org.)
curl --proto '=https' --tlsv1.2 -sSf -o rustup-init https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init &&
    chmod +x rustup-init && ./rustup-init -y >/dev/null 2>&1 || { echo "rustup failed"; exit 1; }
. "$HOME/.cargo/env"
echo "== rust: $(rustc --version) in $((SECONDS - t)) s"
git -c safe.directory='*' clone -q /src hyblas && cd hyblas
echo "== clone: $(git log --oneline -1)"
t=$SECONDS
cargo run --release --bin hyblas -- demo
demo_rc=$?
demo_s=$((SECONDS - t))
t=$SECONDS
scripts/test-all.sh
test_rc=$?
test_s=$((SECONDS - t))
echo "== fresh Debian 12: demo rc=$demo_rc in $demo_s s; test-all rc=$test_rc in $test_s s"
[[ $demo_rc -eq 0 && $test_rc -eq 0 ]]
EOF
echo "== in the fresh tree: rustup, clone, the demo, the test command (log: $DIR.log)"
chroot "$DIR" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
    /bin/bash /root/fresh.sh > "$DIR.log" 2>&1
rc=$?
grep -E '^== (rust|clone|fresh)|passed, [0-9]+ failed$' "$DIR.log"
echo "fresh-debian: rc=$rc (total $((SECONDS - s)) s)"
exit $rc
