#!/usr/bin/env bash
# Re-vendors the ENI capacity table of the EKS AMIs (MIT-0) from
# awslabs/amazon-eks-ami: `data/eni-max-pods/refresh.sh [COMMIT]`.
# Afterwards, record the commit in README.md and run `cargo test --locked`.
set -euo pipefail

ref=${1:-main}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
url="https://raw.githubusercontent.com/awslabs/amazon-eks-ami/${ref}/nodeadm/internal/kubelet/instance-info.jsonl"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
curl --fail --silent --show-error --location "$url" -o "$tmp"

# Every line is one instance type with its two numbers, in this order;
# the loader in src/blueprint/max_pods.rs reads nothing else.
if bad=$(grep -vnE '^\{"instanceType":"[a-z0-9.-]+","defaultMaxENIs":[0-9]+,"ipv4AddressesPerInterface":[0-9]+\}$' "$tmp"); then
  echo "unexpected lines in ${url}:" >&2
  echo "$bad" | head -5 >&2
  exit 1
fi

mv "$tmp" "$here/instance-info.jsonl"
trap - EXIT
echo "instance-info.jsonl: $(wc -l <"$here/instance-info.jsonl") instance types from ${ref}"
