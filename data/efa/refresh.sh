#!/usr/bin/env bash
# Re-vendors the EFA-capable instance types (Apache-2.0) from aws/eks-charts:
# `data/efa/refresh.sh [COMMIT]`. Afterwards, record the commit in README.md
# and run `cargo test --locked`.
set -euo pipefail

ref=${1:-master}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
url="https://raw.githubusercontent.com/aws/eks-charts/${ref}/stable/aws-efa-k8s-device-plugin/values.yaml"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
curl --fail --silent --show-error --location "$url" -o "$tmp"

# The list is the `values` under `supportedInstanceLabels`, one `- type` a
# line; nothing else of the chart is kept.
awk '/^supportedInstanceLabels:/ { in_labels = 1; next }
     in_labels && /^  values:/ { in_values = 1; next }
     in_values && /^    - / { gsub(/"/, "", $2); print $2; next }
     in_values { exit }' "$tmp" | LC_ALL=C sort -u >"$here/instance-types.txt"

if bad=$(grep -vnE '^[a-z0-9-]+\.[a-z0-9-]+$' "$here/instance-types.txt"); then
  echo "unexpected lines in ${url}:" >&2
  echo "$bad" | head -5 >&2
  exit 1
fi
echo "vendored $(wc -l <"$here/instance-types.txt") instance types from ${url}"
