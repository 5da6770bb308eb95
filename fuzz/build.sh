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

# No sanitizer: eksynth has no unsafe code, the build is faster and the
# binaries run faster. 16 codegen units (cargo-fuzz's default is 1) took
# about half the time on two cores; the binaries fuzz a little slower, which
# does not matter for a build check. FUZZ_CODEGEN_UNITS=1 builds exactly what
# `cargo fuzz run` would.
export RUSTC_BOOTSTRAP=1
cargo fuzz build --sanitizer none --codegen-units "${FUZZ_CODEGEN_UNITS:-16}"
ls -l target/x86_64-unknown-linux-gnu/release/ | grep -E " ($(cargo fuzz list | paste -sd '|'))$"
