#!/bin/sh
# install-deps.sh - install the Debian packages prof needs, only those
# missing.  Safe to run repeatedly; quiet when nothing is missing.
#   scripts/install-deps.sh          what building ./prof and `make demo` need
#   scripts/install-deps.sh --test   also what `make check` and `make bench` use
# Needs root (or sudo) only when something has to be installed.
set -eu

# libiberty-dev: the C++/Rust demangler (optional: names stay mangled without it).
# libbpf-dev clang: the BPF program that reads Python frames at the sample
# (optional: without them the recorder reads them after it).
BUILD_PKGS="gcc make pkg-config libdw-dev libelf-dev libunwind-dev zlib1g-dev libzstd-dev
libiberty-dev libc6-dbg binutils procps libcapstone-dev libbpf-dev clang"
# valgrind: callgrind tests; linux-perf: side-by-side tests and benchmarks;
# clang + libclang-rt: libFuzzer targets; protobuf-compiler: pprof decoding;
# chromium: the SVG/HTML reports are loaded in a real browser; time: /usr/bin/time;
# libfuse3-dev fuse3 e2fsprogs: the I/O-wait tests' disk with a set latency
# (tests/resources/slowdisk.c).
# g++ lld mold golang-go rustc nodejs: the kinds of binaries of the
# compatibility matrix (tests/t1200, scripts/compat.sh); gold is in binutils.
# libjemalloc2 libtcmalloc-minimal4: the allocators `record --heap` is tested
# with (tests/t1400; golang-go's `go tool pprof` reads its export);
# heaptrack redis-server redis-tools: scripts/bench/heap.sh.
TEST_PKGS="valgrind linux-perf clang libclang-rt-14-dev protobuf-compiler chromium time
util-linux python3 g++ lld mold golang-go libfuse3-dev fuse3 e2fsprogs
libjemalloc2 libtcmalloc-minimal4 heaptrack redis-server redis-tools"
# A rustc (rustup) or node installed some other way is used as it is: the
# Debian package would shadow or conflict with it.
command -v rustc >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/rustc" ] || TEST_PKGS="$TEST_PKGS rustc"
command -v node >/dev/null 2>&1 || TEST_PKGS="$TEST_PKGS nodejs"

pkgs=$BUILD_PKGS
[ "${1:-}" = "--test" ] && pkgs="$BUILD_PKGS $TEST_PKGS"

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-deps: need root to install:$missing (run: apt-get install$missing)" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
