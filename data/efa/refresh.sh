#!/usr/bin/env bash
# Re-vendors the EFA-capable instance types (Apache-2.0) from aws/eks-charts
# and their network card counts (Apache-2.0) from aws/amazon-vpc-cni-k8s:
# `data/efa/refresh.sh [CHARTS_COMMIT [VPC_CNI_COMMIT]]`. Afterwards, record
# the commits in README.md and run `cargo test --locked`.
set -euo pipefail

charts_ref=${1:-master}
cni_ref=${2:-master}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
url="https://raw.githubusercontent.com/aws/eks-charts/${charts_ref}/stable/aws-efa-k8s-device-plugin/values.yaml"
cni_url="https://raw.githubusercontent.com/aws/amazon-vpc-cni-k8s/${cni_ref}/pkg/vpc/vpc_ip_resource_limit.go"

tmp=$(mktemp)
cni=$(mktemp)
trap 'rm -f "$tmp" "$cni"' EXIT
curl --fail --silent --show-error --location "$url" -o "$tmp"
curl --fail --silent --show-error --location "$cni_url" -o "$cni"

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

# The generated Go map holds each type as `"<type>": {` followed by its
# `NetworkCards` entries, one `NetworkCardIndex:` each; the count of those
# is kept for the EFA-capable types only, `<type> <count>` a line.
awk '/^\t"[a-z0-9.-]+": \{$/ { if (type != "") print type, cards; type = $1; gsub(/[":]/, "", type); cards = 0; next }
     /^\t+NetworkCardIndex:/ { cards++ }
     END { if (type != "") print type, cards }' "$cni" | LC_ALL=C sort >"$cni.cards"
LC_ALL=C join "$cni.cards" "$here/instance-types.txt" >"$here/network-cards.txt"
rm -f "$cni.cards"

if bad=$(grep -vnE '^[a-z0-9-]+\.[a-z0-9-]+ [1-9][0-9]*$' "$here/network-cards.txt"); then
  echo "unexpected lines from ${cni_url}:" >&2
  echo "$bad" | head -5 >&2
  exit 1
fi
echo "vendored network cards of $(wc -l <"$here/network-cards.txt") EFA-capable types from ${cni_url}"
