#!/usr/bin/env bash
# Re-vendors the CloudFormation provider schemas eksynth validates against,
# from the cfn-lint package on PyPI (its patched copies of the AWS registry
# schemas, MIT-0). Run from anywhere: `schemas/refresh.sh`.
#
# What it does: makes a throwaway venv, installs exactly cfn-lint==$CFN_LINT_VERSION
# (without dependencies: only the data files are used), looks every type in
# TYPES up in the us-east-1 providers index and copies the schema file byte
# for byte to resources/<type, :: -> _, lowercased>.json, then writes
# manifest.txt. Types not listed here are never copied.
#
# After a refresh: update the version in README.md, keep the include_str!
# table in src/validate/schema/mod.rs in step with TYPES, and run
# `cargo test --test schema`.
set -euo pipefail

CFN_LINT_VERSION="1.58.0"
REGION="us-east-1"

TYPES=(
  AWS::AutoScaling::AutoScalingGroup
  AWS::AutoScaling::LifecycleHook
  AWS::AutoScaling::ScheduledAction
  AWS::AutoScaling::WarmPool
  AWS::CloudFormation::CustomResource
  AWS::EC2::LaunchTemplate
  AWS::EC2::PlacementGroup
  AWS::EC2::SecurityGroup
  AWS::EC2::SecurityGroupEgress
  AWS::EC2::SecurityGroupIngress
  AWS::EC2::Volume
  AWS::EKS::AccessEntry
  AWS::EKS::Nodegroup
  AWS::IAM::InstanceProfile
  AWS::IAM::ManagedPolicy
  AWS::IAM::Policy
  AWS::IAM::Role
  AWS::IAM::RolePolicy
  AWS::Lambda::Function
  AWS::Lambda::Permission
  AWS::Logs::LogGroup
  AWS::SSM::Parameter
)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
  "cfn-lint==${CFN_LINT_VERSION}"

site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
data="$site/cfnlint/data/schemas"
if [[ ! -f "$data/providers/$REGION.json" ]]; then
  echo "refresh.sh: $data/providers/$REGION.json not found; has cfn-lint's layout changed?" >&2
  exit 1
fi

# Start from an empty resources/ so a type dropped from TYPES disappears too.
rm -rf "$here/resources"
mkdir -p "$here/resources"

# The index maps "AWS::X::Y" to a content-hash file name in resources/.
# Python does the JSON reading and the copying; bash owns the list.
"$work/venv/bin/python" - "$data" "$REGION" "$here" "$CFN_LINT_VERSION" "${TYPES[@]}" <<'PY'
import hashlib, json, os, shutil, sys

data, region, out, version, *types = sys.argv[1:]
with open(os.path.join(data, "providers", region + ".json")) as f:
    index = json.load(f)
try:
    with open(os.path.join(data, "version.json")) as f:
        schema_date = json.load(f).get("schema_date", "unknown")
except FileNotFoundError:
    schema_date = "unknown"

lines = [
    f"# cfn-lint {version}, cfnlint/data/schemas/providers/{region}.json, schema_date {schema_date}",
    "# type\tvendored file\tcfn-lint file\tbytes\tsha256",
]
missing = []
for type_name in sorted(types):
    if type_name not in index:
        missing.append(type_name)
        continue
    source = os.path.join(data, "resources", index[type_name] + ".json")
    target_name = type_name.replace("::", "_").lower() + ".json"
    target = os.path.join(out, "resources", target_name)
    shutil.copyfile(source, target)
    with open(target, "rb") as f:
        body = f.read()
    declared = json.loads(body).get("typeName")
    if declared != type_name:
        sys.exit(f"refresh.sh: {source} declares typeName {declared!r}, expected {type_name!r}")
    lines.append(
        f"{type_name}\tresources/{target_name}\tresources/{index[type_name]}.json"
        f"\t{len(body)}\t{hashlib.sha256(body).hexdigest()}"
    )
if missing:
    sys.exit("refresh.sh: not in the providers index: " + ", ".join(missing))
with open(os.path.join(out, "manifest.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"vendored {len(types)} schemas from cfn-lint {version} (schema_date {schema_date})")
PY
