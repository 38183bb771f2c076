#!/usr/bin/env bash
# Side by side with RocksDB and fjall: install what librocksdb-sys needs to build (libclang,
# clang) if it is missing, build shamba-compare in release mode and run it.
#
#   scripts/compare.sh            # default run (2M keys, under 15 minutes on 2 cores)
#   scripts/compare.sh --quick    # 200k keys, under 3 minutes
#   scripts/compare.sh --deep     # 30M keys, 5 levels (long)
#   scripts/compare.sh --json     # one JSON object on stdout
#
# Not run by CI: shamba-compare is a workspace member but not a default member.
set -euo pipefail
cd "$(dirname "$0")/.."

# libclang itself: libclang-cpp (which other LLVM packages bring) is not what bindgen loads.
have_libclang() {
    ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || ls /usr/lib/x86_64-linux-gnu/libclang-[0-9]*.so* >/dev/null 2>&1
}

if ! have_libclang || ! command -v clang >/dev/null 2>&1; then
    echo "installing libclang-dev and clang (needed to build librocksdb-sys)" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y libclang-dev clang
fi

cargo build --release -p shamba-compare --features peers
exec ./target/release/shamba-compare "$@"
