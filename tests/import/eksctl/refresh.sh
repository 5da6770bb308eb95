#!/bin/sh
# Copies eksctl's examples that define node groups into examples/.
# Usage: refresh.sh PATH-TO-AN-EKSCTL-CHECKOUT
set -eu
src=$1/examples
dest=$(dirname "$0")/examples
rm -rf "$dest"
mkdir -p "$dest"
for file in "$src"/*.yaml; do
  if python3 -c '
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
sys.exit(0 if config.get("nodeGroups") or config.get("managedNodeGroups") else 1)
' "$file"; then
    cp "$file" "$dest/"
  fi
done
git -C "$1" log -1 --format='commit %H (%cs)'
