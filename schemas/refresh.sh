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

# cfn-lint's extension schemas (rules that span properties), under
# cfnlint/data/schemas/extensions/; src/validate/extensions.rs says where each
# applies and which finding it gives.
EXTENSIONS=(
  aws_ec2_instance/virtualname_ephemeral.json
  aws_ec2_securitygroup/all_to_and_from_ports.json
  aws_ec2_securitygroup/protocols_and_port_ranges_exclude.json
  aws_ec2_securitygroup/protocols_and_port_ranges_include.json
  aws_lambda_function/zipfile_runtime_enum.json
  aws_lambda_function/zipfile_runtime_exists.json
)

# cfn-lint's IAM policy grammar (cfnlint/data/schemas/other/iam/): the common
# definitions (policy.json) and one schema per kind of policy document, which
# refer to it as `policy#/...`; src/validate/iam_policies.rs merges them.
IAM=(
  policy.json
  policy_identity.json
  policy_resource.json
  policy_resource_ecr.json
  policy_trust.json
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

# The extension schemas, byte for byte; the Lambda runtime lifecycle table;
# and the EC2 instance types cfn-lint knows in any region, one per line.
"$work/venv/bin/python" - "$site/cfnlint/data" "$here" "$CFN_LINT_VERSION" "${IAM[*]}" "${EXTENSIONS[@]}" <<'PY'
import hashlib, json, os, shutil, sys

data, out, version, iam, *extensions = sys.argv[1:]
lines = [
    f"# cfn-lint {version}, cfnlint/data",
    "# vendored file\tcfn-lint file\tbytes\tsha256",
]

def vendor(source, target):
    os.makedirs(os.path.dirname(os.path.join(out, target)), exist_ok=True)
    shutil.copyfile(os.path.join(data, source), os.path.join(out, target))
    record(source, target)

def record(source, target):
    with open(os.path.join(out, target), "rb") as f:
        body = f.read()
    json.loads(body) if target.endswith(".json") else None
    lines.append(f"{target}\t{source}\t{len(body)}\t{hashlib.sha256(body).hexdigest()}")

shutil.rmtree(os.path.join(out, "extensions"), ignore_errors=True)
for extension in extensions:
    vendor(f"schemas/extensions/{extension}", f"extensions/{extension}")
shutil.rmtree(os.path.join(out, "iam"), ignore_errors=True)
for name in iam.split():
    vendor(f"schemas/other/iam/{name}", f"iam/{name}")
vendor("AdditionalSpecs/LmbdRuntimeLifecycle.json", "data/lambda-runtime-lifecycle.json")

# Every region's list, and cfn-lint's "all": a type that exists anywhere.
with open(os.path.join(data, "schemas/extensions/aws_ec2_instance/instancetype_enum.json")) as f:
    by_region = json.load(f)
types = sorted({
    name
    for region in by_region.values() if isinstance(region, dict)
    for name in region.get("enum", [])
})
if len(types) < 500:
    sys.exit(f"refresh.sh: only {len(types)} instance types; has cfn-lint's layout changed?")
with open(os.path.join(out, "data/ec2-instance-types.txt"), "w") as f:
    f.write("\n".join(types) + "\n")
record("schemas/extensions/aws_ec2_instance/instancetype_enum.json (every region)", "data/ec2-instance-types.txt")

with open(os.path.join(out, "extensions/manifest.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"vendored {len(extensions)} extension schemas, {len(iam.split())} IAM policy schemas, the Lambda runtime lifecycle and {len(types)} instance types")
PY
