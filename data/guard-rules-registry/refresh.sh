#!/usr/bin/env bash
# Re-vendors the selected rules of the AWS Guard Rules Registry (Apache-2.0)
# from aws-cloudformation/aws-guard-rules-registry:
# `data/guard-rules-registry/refresh.sh [COMMIT]`. The rules are the paths
# listed in selection.txt, each copied byte for byte to rules/<file name>,
# with the registry's LICENSE and NOTICE; nothing else is kept, so the same
# commit always gives the same files. Without COMMIT, the commit recorded in
# README.md is used again. With GUARD_RULES_REGISTRY_GIT set to a clone's git
# directory, the files are read from it instead of downloaded.
# Afterwards, record the commit in README.md, run the rules over the
# examples (README.md says how) and update expected.txt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The README's `- Commit:` line names the vendored commit.
# shellcheck disable=SC2016 # the backquotes are the README's, not a command
pinned=$(sed -n 's/^- Commit: `\([0-9a-f]\{40\}\)`.*/\1/p' "$here/README.md")
ref=${1:-$pinned}
if ! [[ $ref =~ ^[0-9a-f]{40}$ ]]; then
  echo "refresh.sh: give a full 40-digit commit, not \`${ref}\`, so that the selection can be re-created" >&2
  exit 2
fi
repository=aws-cloudformation/aws-guard-rules-registry

# One file of the registry at the commit, to standard output.
registry_file() {
  if [ -n "${GUARD_RULES_REGISTRY_GIT:-}" ]; then
    git --git-dir="$GUARD_RULES_REGISTRY_GIT" show "${ref}:$1"
  else
    curl --fail --silent --show-error --location \
      "https://raw.githubusercontent.com/${repository}/${ref}/$1"
  fi
}

mapfile -t paths < <(grep -v -e '^#' -e '^$' "$here/selection.txt")
if bad=$(printf '%s\n' "${paths[@]}" | grep -vnE '^rules/aws/[a-z0-9_]+/[a-z0-9_]+\.guard$'); then
  echo "refresh.sh: unexpected lines in selection.txt:" >&2
  echo "$bad" >&2
  exit 2
fi
if dup=$(printf '%s\n' "${paths[@]}" | xargs -n1 basename | sort | uniq -d) && [ -n "$dup" ]; then
  echo "refresh.sh: two selected rules share a file name: ${dup}" >&2
  exit 2
fi

# Written beside the old copy and swapped in at the end, so that a failed
# download leaves the vendored rules as they were.
staging=$(mktemp -d "$here/.refresh.XXXXXX")
trap 'rm -rf "$staging"' EXIT
mkdir "$staging/rules"
for path in "${paths[@]}"; do
  registry_file "$path" >"$staging/rules/$(basename "$path")"
done
registry_file LICENSE >"$staging/LICENSE"
registry_file NOTICE >"$staging/NOTICE"

rm -rf "$here/rules"
mv "$staging/rules" "$here/rules"
mv "$staging/LICENSE" "$staging/NOTICE" "$here/"
echo "vendored ${#paths[@]} rules of ${repository} at ${ref}"
