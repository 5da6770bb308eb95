#!/usr/bin/env bash
# Runs the vendored rules over every example template with the Guard CLI
# (`cfn-guard`, on PATH or given as CFN_GUARD) and prints each failure as
# `RULE TEMPLATE`, one a line, sorted: after a refresh, or a change to what
# eksynth writes, compare them with the `fails` lines of expected.txt
# (`data/guard-rules-registry/failures.sh | diff - <(...)`, see README.md).
# Install the Guard CLI of the crate's version with
# `cargo install cfn-guard --locked --version 3.2.1`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
guard=${CFN_GUARD:-cfn-guard}

mapfile -t templates < <(grep -l '^AWSTemplateFormatVersion' examples/*/*.yaml)
for template in "${templates[@]}"; do
  # Exit code 19 means a rule failed; the summary says which, a line
  # `<rules file>/<RULE>    FAIL` each. Any other failure stops here.
  status=0
  summary=$("$guard" validate -r "$here/rules" -d "$template" --show-summary fail) || status=$?
  if [ "$status" != 0 ] && [ "$status" != 19 ]; then
    echo "failures.sh: ${guard} failed (exit ${status}) on ${template}" >&2
    exit 2
  fi
  sed -nE 's|^[a-z0-9_]+\.guard/([A-Z0-9_]+) +FAIL$|\1 '"$template"'|p' <<<"$summary"
done | LC_ALL=C sort
