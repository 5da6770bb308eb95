#!/usr/bin/env python3
"""Regenerates the nodeadm NodeConfig data in this folder.

- nodeconfig.schema.json: the `openAPIV3Schema` of the `v1alpha1` version of
  nodeadm's CustomResourceDefinition (nodeadm/crds/node.eks.aws_nodeconfigs.yaml),
  unchanged, as JSON;
- feature-gates.json: the `Feature` names nodeadm's v1alpha1 API declares
  (nodeadm/api/v1alpha1/nodeconfig_types.go).

Sources are read from a local git repository (bare or not) of
awslabs/amazon-eks-ami at --ref, or downloaded from raw.githubusercontent.com:

    ./refresh.py --ref v20260724 [--repo ~/src/amazon-eks-ami]

Needs PyYAML (`pip install pyyaml`).
"""

import argparse
import json
import os
import re
import subprocess
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CRD = "nodeadm/crds/node.eks.aws_nodeconfigs.yaml"
TYPES = "nodeadm/api/v1alpha1/nodeconfig_types.go"


def read(args, path):
    if args.repo:
        git_dir = args.repo if os.path.exists(os.path.join(args.repo, "HEAD")) else os.path.join(args.repo, ".git")
        return subprocess.run(
            ["git", "--git-dir", git_dir, "show", f"{args.ref}:{path}"], check=True, capture_output=True, text=True
        ).stdout
    url = f"https://raw.githubusercontent.com/awslabs/amazon-eks-ami/{args.ref}/{path}"
    with urllib.request.urlopen(url) as response:
        return response.read().decode("utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", default="v20260724", help="tag or commit of awslabs/amazon-eks-ami")
    parser.add_argument("--repo", help="git repository (or checkout) of awslabs/amazon-eks-ami")
    args = parser.parse_args()

    crd = yaml.safe_load(read(args, CRD))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
    with open(os.path.join(HERE, "nodeconfig.schema.json"), "w", encoding="utf-8") as f:
        json.dump(version["schema"]["openAPIV3Schema"], f, indent=2)
        f.write("\n")

    features = re.findall(r'^\s*\w+\s+Feature\s*=\s*"([^"]+)"', read(args, TYPES), re.M)
    with open(os.path.join(HERE, "feature-gates.json"), "w", encoding="utf-8") as f:
        json.dump(features, f, indent=2)
        f.write("\n")
    print(f"NodeConfig schema and {len(features)} feature gates written")


if __name__ == "__main__":
    main()
