#!/usr/bin/env bash
# Builds (does not run) every fuzz target, for CI. Installs cargo-fuzz when
# it is missing. cargo-fuzz drives nightly-only rustc flags (-Z sanitizer=…,
# coverage instrumentation); on a stable toolchain RUSTC_BOOTSTRAP=1 unlocks
# them. The fuzz crate is its own workspace, so this never touches the main
# crate's build.
set -euo pipefail
cd "$(dirname "$0")"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
cargo fuzz --version

# No sanitizer: Rust code is memory-safe without ASan, the build is faster,
# and the instrumented binaries run about twice as fast. Use `-s address`
# with a nightly toolchain to hunt for memory errors in unsafe dependencies.
export RUSTC_BOOTSTRAP=1
for target in $(cargo fuzz list); do
  echo "== building ${target}"
  cargo fuzz build --sanitizer none "${target}"
done
