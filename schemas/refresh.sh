#!/usr/bin/env bash
# Re-vendors the CloudFormation provider schemas eksynth validates against:
# every resource type of cfn-lint's us-east-1 provider (its patched copies of
# the AWS registry schemas, MIT-0), from the cfn-lint package on PyPI. Run
# from anywhere: `schemas/refresh.sh`.
#
# What it does: makes a throwaway venv, installs exactly
# cfn-lint==$CFN_LINT_VERSION (without dependencies: only the data files are
# used), reads the us-east-1 providers index and writes, from the schema
# files it names, byte for byte:
#   resources.zip  every schema as <type, :: -> _, lowercased>.json,
#                  deflated one by one (so one can be inflated alone; the
#                  STORED types eksynth emits are not compressed at all), in
#                  type order, with fixed dates: the same input gives the
#                  same bytes
#   manifest.txt   type, archive member, cfn-lint file, bytes, SHA-256
#   index.rs       the table the binary looks types up in: type, the
#                  member's data as offset and length in the archive,
#                  inflated length, deflated or stored
#   attributes.json the types whose settable properties `Fn::GetAtt` reads
#                  too, which their schemas do not say: the two tables of
#                  cfn-lint's cfnlint/schema/_getatts.py, read as data
# then the extension schemas and data files listed below (see README.md).
#
# After a refresh: update the version and date in README.md and run
# `cargo test --test schema` (it checks the three files agree, hash by hash).
set -euo pipefail

CFN_LINT_VERSION="1.58.0"
REGION="us-east-1"

# The types eksynth's own templates use: stored in the archive without
# compression, so that compiling a blueprint inflates nothing.
STORED=(
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
  aws_route53_recordset/recordset_alias.json
  aws_route53_recordset/recordset_pattern.json
  aws_s3_bucket/ownershipcontrols.json
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

# The index maps "AWS::X::Y" to a content-hash file name in resources/.
"$work/venv/bin/python" - "$data" "$REGION" "$here" "$CFN_LINT_VERSION" "${STORED[@]}" <<'PY'
import hashlib, json, os, sys, zipfile

data, region, out, version, *stored = sys.argv[1:]
missing = sorted(set(stored) - set(json.load(open(os.path.join(data, "providers", region + ".json")))))
if missing:
    sys.exit("refresh.sh: not in the providers index: " + ", ".join(missing))
with open(os.path.join(data, "providers", region + ".json")) as f:
    index = json.load(f)
try:
    with open(os.path.join(data, "version.json")) as f:
        schema_date = json.load(f).get("schema_date", "unknown")
except FileNotFoundError:
    schema_date = "unknown"

origin = f"cfn-lint {version}, cfnlint/data/schemas/providers/{region}.json, schema_date {schema_date}"
manifest = [origin, "# type\tarchive member\tcfn-lint file\tbytes\tsha256"]
members = {}
archive_path = os.path.join(out, "resources.zip")
with zipfile.ZipFile(archive_path + ".tmp", "w") as archive:
    for type_name in sorted(index):
        source = os.path.join(data, "resources", index[type_name] + ".json")
        with open(source, "rb") as f:
            body = f.read()
        declared = json.loads(body).get("typeName")
        if declared != type_name:
            sys.exit(f"refresh.sh: {source} declares typeName {declared!r}, expected {type_name!r}")
        name = type_name.replace("::", "_").lower() + ".json"
        if name in members:
            sys.exit(f"refresh.sh: {type_name} and {members[name]} would share {name}")
        members[name] = type_name
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED if type_name in stored else zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        archive.writestr(info, body, compresslevel=9)
        manifest.append(
            f"{type_name}\t{name}\tresources/{index[type_name]}.json"
            f"\t{len(body)}\t{hashlib.sha256(body).hexdigest()}"
        )
os.replace(archive_path + ".tmp", archive_path)

# Where each member's deflated bytes start: after its local header, whose
# length depends on its name and extra field.
rows = []
with open(archive_path, "rb") as f:
    raw = f.read()
with zipfile.ZipFile(archive_path) as archive:
    for info in archive.infolist():
        header = info.header_offset
        if raw[header:header + 4] != b"PK\x03\x04":
            sys.exit(f"refresh.sh: no local header for {info.filename}")
        name_length = int.from_bytes(raw[header + 26:header + 28], "little")
        extra_length = int.from_bytes(raw[header + 28:header + 30], "little")
        start = header + 30 + name_length + extra_length
        deflated = "true" if info.compress_type == zipfile.ZIP_DEFLATED else "false"
        rows.append(
            f'    ("{members[info.filename]}", {start}, {info.compress_size}, {info.file_size}, {deflated}),'
        )

with open(os.path.join(out, "manifest.txt"), "w") as f:
    f.write("# " + origin + "\n" + "\n".join(manifest[1:]) + "\n")
with open(os.path.join(out, "index.rs"), "w") as f:
    f.write(
        "// Written by schemas/refresh.sh from " + origin + ".\n"
        "// Do not edit: run the script. Sorted by type: (type, offset of the\n"
        "// member's data in resources.zip, its length, the inflated length,\n"
        "// whether it is deflated or stored as it is).\n"
        "&[\n" + "\n".join(rows) + "\n]\n"
    )
# cfn-lint keeps, in code, which types return settable properties as
# attributes: every property for some types, named ones for others. The two
# literals are read without running cfn-lint.
import ast
getatts_path = os.path.join(data, "..", "..", "schema", "_getatts.py")
with open(getatts_path) as f:
    tree = ast.parse(f.read())
tables = {}
for node in tree.body:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        if node.targets[0].id in ("_all_property_types", "_exceptions"):
            tables[node.targets[0].id] = ast.literal_eval(node.value)
if set(tables) != {"_all_property_types", "_exceptions"}:
    sys.exit(f"refresh.sh: {getatts_path} no longer has _all_property_types and _exceptions")
attributes = {
    "source": f"cfn-lint {version}, cfnlint/schema/_getatts.py",
    "everyProperty": sorted(tables["_all_property_types"]),
    "properties": {name: list(props) for name, props in sorted(tables["_exceptions"].items())},
}
with open(os.path.join(out, "attributes.json"), "w") as f:
    json.dump(attributes, f, indent=2)
    f.write("\n")

print(f"vendored {len(index)} schemas from cfn-lint {version} (schema_date {schema_date})")
PY

# The extension schemas, the IAM policy grammar and the schema of
# `AWS::CloudFormation::Init`, byte for byte; the Lambda runtime lifecycle table;
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
shutil.rmtree(os.path.join(out, "other"), ignore_errors=True)
vendor("schemas/other/resources/cfn_init.json", "other/cfn_init.json")
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
