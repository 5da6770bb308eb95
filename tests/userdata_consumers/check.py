"""The user data of every example, through the programs that read it on a node.

For each committed example template, every launch template's `UserData`
(`Fn::Base64` of `Fn::Sub`) is resolved the way CloudFormation would, with
plausible values for pseudo parameters, parameters, references and imports,
and then:

- MIME user data goes through cloud-init's own user-data processor
  (`cloudinit.user_data.UserDataProcessor`), which must keep every part, each
  with the content type its header declares (a part cloud-init cannot read
  comes out as `text/x-not-multipart`, or merged into another);
- then through cloud-init's part handlers, as a node's first boot runs them:
  the shell part handler writes each script to disk, and the bytes written
  must be the part's body byte for byte (decoded from base64 where the part
  says so: a part with non-ASCII text is sent that way); the cloud-config
  handler merges each cloud-config part, and every `write_files` content
  must come out of the merge as the part wrote it; no handler may fail;
- every shell script (a shell part or boothook, a whole shell user data, a script a shell
  part writes through a heredoc, a `write_files` script of a cloud-config part)
  goes through shellcheck at severity warning: no finding is allowed;
- `application/node.eks.aws` and `text/cloud-config` parts are read with
  cloud-init's YAML loader, Bottlerocket settings with `tomllib`;
- PowerShell (Windows) is out of scope and only counted.

The templates are read as `eksynth synth BLUEPRINT --format json --stack NAME`
writes them (the committed YAML is the same template: `eksynth check` proves
it), so no YAML reader is needed for CloudFormation's tags.

Run with the system python3, which has Debian's `cloud-init` package:

    /usr/bin/python3 tests/userdata_consumers/check.py \
        --eksynth target/release/eksynth --shellcheck .venv-cfnlint/bin/shellcheck \
        examples/*/*.yaml

`--blueprint FILE` checks the template of a one-stack blueprint as well.
With `PYTHONPATH` naming another cloud-init's packages, that cloud-init is
the one used (`.ci/run` runs the checker with Debian bookworm's and with a
current one).

It exits 1 on any problem, and also when it checked nothing at all.
"""

import argparse
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# Plausible values for everything a template can leave to deploy time.
PSEUDO = {
    "AWS::AccountId": "123456789012",
    "AWS::NotificationARNs": "",
    "AWS::Partition": "aws",
    "AWS::Region": "eu-west-1",
    "AWS::StackId": "arn:aws:cloudformation:eu-west-1:123456789012:stack/example-nodes/"
    "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d",
    "AWS::StackName": "example-nodes",
    "AWS::URLSuffix": "amazonaws.com",
}

CA_DATA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0BAQsFADAV\n"
    b"-----END CERTIFICATE-----\n"
).decode()

# By what a parameter or an export is named after (the end of its name).
BY_NAME = [
    ("ClusterName", "demo"),
    ("Endpoint", "https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com"),
    ("CertificateAuthority", CA_DATA),
    ("Cidr", "10.100.0.0/16"),
    ("DnsIp", "10.100.0.10"),
    ("StackName", "example-nodes"),
    ("SecurityGroupId", "sg-0123456789abcdef0"),
    ("SecurityGroup", "sg-0123456789abcdef0"),
    ("VpcId", "vpc-0123456789abcdef0"),
    ("Arn", "arn:aws:iam::123456789012:role/example"),
]

# By a parameter's type.
BY_TYPE = {
    "Number": "1",
    "AWS::EC2::VPC::Id": "vpc-0123456789abcdef0",
    "AWS::EC2::SecurityGroup::Id": "sg-0123456789abcdef0",
    "AWS::EC2::Subnet::Id": "subnet-0123456789abcdef0",
    "AWS::EC2::Image::Id": "ami-0123456789abcdef0",
    "AWS::EC2::KeyPair::KeyName": "example-key",
}

# A resource's `Ref`, by its type.
REF_BY_TYPE = {
    "AWS::EC2::SecurityGroup": "sg-0123456789abcdef1",
    "AWS::EC2::LaunchTemplate": "lt-0123456789abcdef0",
    "AWS::EFS::FileSystem": "fs-0123456789abcdef0",
    "AWS::EC2::PlacementGroup": "example-placement-group",
}

SHELLS = ("sh", "bash", "dash", "ksh")


class Unresolvable(Exception):
    """A value the checker cannot give a plausible value to."""


@dataclass
class Report:
    """What was checked, and every problem found."""

    templates: int = 0
    user_data: int = 0
    mime_parts: int = 0
    shell_scripts: int = 0
    yaml_documents: int = 0
    toml_documents: int = 0
    powershell_skipped: int = 0
    problems: list = field(default_factory=list)

    def problem(self, where, message):
        self.problems.append(f"{where}: {message}")

    def checked(self):
        return self.mime_parts + self.shell_scripts + self.yaml_documents + self.toml_documents

    def summary(self):
        return (
            f"{self.templates} templates, {self.user_data} user data: "
            f"{self.mime_parts} MIME parts through cloud-init, "
            f"{self.shell_scripts} shell scripts through shellcheck, "
            f"{self.yaml_documents} YAML and {self.toml_documents} TOML documents parsed, "
            f"{self.powershell_skipped} PowerShell user data skipped"
        )


def plausible_by_name(name, kind="String"):
    for suffix, value in BY_NAME:
        if name.endswith(suffix):
            return value
    if kind in BY_TYPE:
        return BY_TYPE[kind]
    if kind.startswith("List<"):
        inner = BY_TYPE.get(kind[5:-1], "example")
        return f"{inner},{inner}"
    return f"example-{name}"


def parameter_value(name, parameter):
    kind = parameter.get("Type", "String")
    if kind.startswith("AWS::SSM::Parameter::Value<"):
        # The default is the SSM path; the value is what is stored there.
        return plausible_by_name(name, kind[len("AWS::SSM::Parameter::Value<") : -1])
    if "Default" in parameter:
        default = parameter["Default"]
        return default if isinstance(default, str) else json.dumps(default)
    return plausible_by_name(name, kind)


def ref_value(name, template):
    if name in PSEUDO:
        return PSEUDO[name]
    if name in template.get("Parameters", {}):
        return parameter_value(name, template["Parameters"][name])
    resource = template.get("Resources", {}).get(name)
    if resource is None:
        raise Unresolvable(f"`{name}` is no parameter, resource or pseudo parameter")
    return REF_BY_TYPE.get(resource["Type"], f"{PSEUDO['AWS::StackName']}-{name}-0A1B2C3D4E5F")


def getatt_value(name, attribute, template):
    resource = template.get("Resources", {}).get(name)
    if resource is None:
        raise Unresolvable(f"`Fn::GetAtt` of `{name}`, which is no resource")
    if attribute == "Arn" or attribute.endswith(".Arn"):
        return f"arn:aws:iam::123456789012:role/{name}"
    if attribute in ("GroupId",):
        return "sg-0123456789abcdef1"
    if attribute.endswith("VersionNumber"):
        return "1"
    return f"{name}-{attribute}"


def resolve(expr, template):
    """A plausible text for a value of the template."""
    if isinstance(expr, str):
        return expr
    if isinstance(expr, bool):
        return "true" if expr else "false"
    if isinstance(expr, (int, float)):
        return str(expr)
    if isinstance(expr, dict) and len(expr) == 1:
        (function, argument), = expr.items()
        if function == "Ref":
            return ref_value(argument, template)
        if function == "Fn::GetAtt":
            name, attribute = argument.split(".", 1) if isinstance(argument, str) else argument
            return getatt_value(name, resolve(attribute, template), template)
        if function == "Fn::ImportValue":
            return plausible_by_name(resolve(argument, template))
        if function == "Fn::Sub":
            return substitute(argument, template)
        if function == "Fn::Join":
            delimiter, items = argument
            return delimiter.join(resolve(item, template) for item in resolve_list(items, template))
        if function == "Fn::Select":
            index, items = argument
            return resolve(resolve_list(items, template)[int(resolve(index, template))], template)
        if function == "Fn::Base64":
            return base64.b64encode(resolve(argument, template).encode()).decode()
        if function == "Fn::FindInMap":
            mapping, key, second = (resolve(part, template) for part in argument)
            return resolve(template["Mappings"][mapping][key][second], template)
    raise Unresolvable(f"no plausible value for {json.dumps(expr)[:120]}")


def resolve_list(expr, template):
    if isinstance(expr, list):
        return expr
    if isinstance(expr, dict) and "Fn::Split" in expr:
        delimiter, text = expr["Fn::Split"]
        return resolve(text, template).split(delimiter)
    return resolve(expr, template).split(",")


VARIABLE = re.compile(r"\$\{(!?)([^}]*)\}")


def substitute(argument, template):
    """`Fn::Sub` as CloudFormation does it: `${Name}` from the variable map,
    parameters, resources (`${Res.Attr}` too) and pseudo parameters;
    `${!Literal}` becomes `${Literal}`."""
    text, variables = (argument, {}) if isinstance(argument, str) else argument

    def one(match):
        escaped, name = match.groups()
        if escaped:
            return "${" + name + "}"
        if name in variables:
            return resolve(variables[name], template)
        if "." in name and not name.startswith("AWS::"):
            resource, attribute = name.split(".", 1)
            return getatt_value(resource, attribute, template)
        return ref_value(name, template)

    return VARIABLE.sub(one, text)


def user_data_of(template):
    """(launch template ID, resolved user data text) of every launch template
    with user data."""
    found = []
    for name, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::EC2::LaunchTemplate":
            continue
        data = resource.get("Properties", {}).get("LaunchTemplateData", {})
        if "UserData" not in data:
            continue
        user_data = data["UserData"]
        if isinstance(user_data, dict) and set(user_data) == {"Fn::Base64"}:
            inner = user_data["Fn::Base64"]
            found.append((name, resolve(inner, template)))
        else:
            # A literal is base64 already.
            found.append((name, base64.b64decode(resolve(user_data, template)).decode()))
    return found


def declared_parts(text):
    """The content types a MIME multipart user data declares for its parts,
    read line by line from the text as written (not through an email
    parser): what each part is meant to be."""
    lines = text.split("\n")
    header_end = lines.index("") if "" in lines else len(lines)
    headers = "\n".join(lines[:header_end])
    match = re.search(r'boundary="?([^";\n]+)"?', headers, re.IGNORECASE)
    if not match:
        return None
    delimiter = "--" + match.group(1)
    types = []
    in_headers = False
    for line in lines[header_end:]:
        if line == delimiter:
            types.append(None)
            in_headers = True
        elif line == delimiter + "--":
            break
        elif in_headers:
            if line == "":
                in_headers = False
            elif line.lower().startswith("content-type:"):
                types[-1] = line.split(":", 1)[1].split(";")[0].strip().lower()
    return types


def cloud_init_parts(text):
    """The parts cloud-init's user-data processor makes of `text`:
    (content type, payload) each."""
    # Imported here so that a machine without cloud-init can still run the
    # parts of the checker that do not need it.
    from cloudinit import helpers
    from cloudinit.user_data import UserDataProcessor

    with tempfile.TemporaryDirectory() as cloud_dir:
        paths = helpers.Paths({"cloud_dir": cloud_dir, "run_dir": cloud_dir})
        message = UserDataProcessor(paths).process(text.encode())
    parts = []
    for part in message.walk():
        if part.get_content_maintype() == "multipart":
            continue
        # As cloud-init's own handlers read a payload
        # (`cloudinit.util.fully_decoded_payload`): what is not UTF-8 stays
        # as lone surrogates, for the delivery check to find.
        payload = part.get_payload(decode=True)
        text = payload.decode("utf-8", "surrogateescape") if payload else ""
        parts.append((part.get_content_type(), text))
    return parts


def declared_bodies(text):
    """The body of each part of a MIME multipart user data as bytes, read
    from the text as written and decoded from base64 where the part
    declares it: what each part is meant to hand its reader."""
    lines = text.split("\n")
    header_end = lines.index("") if "" in lines else len(lines)
    match = re.search(r'boundary="?([^";\n]+)"?', "\n".join(lines[:header_end]), re.IGNORECASE)
    if not match:
        return []
    delimiter = "--" + match.group(1)
    bodies = []
    part = None
    for line in lines[header_end:]:
        if line in (delimiter, delimiter + "--"):
            if part is not None:
                # The line break before a delimiter belongs to the delimiter.
                body = "\n".join(part["lines"]).encode()
                bodies.append(base64.b64decode(body) if part["base64"] else body)
            if line == delimiter + "--":
                break
            part = {"headers": True, "base64": False, "lines": []}
        elif part is None:
            continue
        elif part["headers"]:
            if line == "":
                part["headers"] = False
            elif line.lower().replace(" ", "") == "content-transfer-encoding:base64":
                part["base64"] = True
        else:
            part["lines"].append(line)
    return bodies


class _Instance:
    """The datasource cloud-init's paths ask for an instance ID."""

    def get_instance_id(self):
        return "i-0123456789abcdef0"


def cloud_init_run(text):
    """Runs the part handlers of cloud-init over `text` as a node's first
    boot does (`cloudinit.stages.Init._do_handlers` over the processed user
    data, which is first stored as text): returns the scripts the shell part
    handler wrote (by part number, as bytes), the merged cloud-config, and
    what cloud-init logged as failed. Boothooks are left out: their handler
    runs them."""
    import logging

    from cloudinit import handlers, helpers
    from cloudinit.handlers.cloud_config import CloudConfigPartHandler
    from cloudinit.handlers.shell_script import ShellScriptPartHandler
    from cloudinit.settings import PER_INSTANCE
    from cloudinit.user_data import UserDataProcessor

    failures = []

    class Failures(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING and "fail" in record.getMessage().lower():
                cause = f": {record.exc_info[1]!r}" if record.exc_info else ""
                failures.append(record.getMessage() + cause)

    capture = Failures()
    logger = logging.getLogger("cloudinit")
    logger.addHandler(capture)
    try:
        with tempfile.TemporaryDirectory() as cloud_dir:
            paths = helpers.Paths({"cloud_dir": cloud_dir, "run_dir": cloud_dir}, ds=_Instance())
            message = UserDataProcessor(paths).process(text.encode())
            try:
                str(message)
            except Exception as error:  # what cloud-init stores as user-data.txt.i
                failures.append(f"storing the processed user data failed: {error!r}")
            registry = helpers.ContentHandlers()
            modules = [CloudConfigPartHandler(paths=paths), ShellScriptPartHandler(paths=paths)]
            for module in modules:
                registry.register(module, overwrite=False)
                handlers.call_begin(module, None, PER_INSTANCE)
            walk_data = {
                "handlers": registry,
                "handlerdir": cloud_dir,
                "data": None,
                "frequency": PER_INSTANCE,
                "handlercount": 0,
                "excluded": ["text/cloud-boothook"],
            }
            handlers.walk(message, handlers.walker_callback, walk_data)
            for module in modules:
                handlers.call_end(module, None, PER_INSTANCE)
            scripts_dir = Path(paths.get_ipath_cur("scripts"))
            scripts = {
                int(path.name.removeprefix("part-")): path.read_bytes()
                for path in (scripts_dir.iterdir() if scripts_dir.is_dir() else [])
            }
            merged = Path(paths.get_ipath("cloud_config"))
            config = load_yaml(merged.read_text(encoding="utf-8")) if merged.is_file() else None
    finally:
        logger.removeHandler(capture)
    return scripts, config or {}, failures


def write_files_contents(document):
    """The `content` of each `write_files` entry of a cloud-config."""
    entries = document.get("write_files", []) if isinstance(document, dict) else []
    return [entry.get("content") for entry in entries if isinstance(entry, dict)]


def check_delivery(where, text, parts, report):
    """What cloud-init's handlers make of each part must be what the part
    says, byte for byte."""
    bodies = declared_bodies(text)
    scripts, config, failures = cloud_init_run(text)
    for failure in failures:
        report.problem(where, f"cloud-init: {failure}")
    merged = write_files_contents(config)
    for number, ((kind, _), body) in enumerate(zip(parts, bodies), start=1):
        part = f"{where}, part {number} ({kind})"
        if kind == "text/x-shellscript":
            written = scripts.get(number)
            if written is None:
                report.problem(part, "cloud-init's shell part handler wrote no script")
            elif written != body:
                report.problem(part, f"cloud-init wrote {written[:80]!r}..., not the part's {body[:80]!r}...")
        elif kind == "text/cloud-config":
            try:
                wanted = write_files_contents(load_yaml(body.decode("utf-8")))
            except (UnicodeDecodeError, ValueError) as error:
                report.problem(part, f"not UTF-8 YAML: {error}")
                continue
            for content in wanted:
                if content not in merged:
                    report.problem(part, f"write_files content {content!r} is not in cloud-init's merged cloud-config")


def load_yaml(text):
    from cloudinit import util

    return util.load_yaml(text, default=None, allowed=(dict, list))


def interpreter(script):
    """The shell a script's `#!` line names, or None."""
    first = script.split("\n", 1)[0]
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    program = os.path.basename(words[0])
    if program == "env" and len(words) > 1:
        program = words[1]
    return program if program in SHELLS else None


HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def embedded_scripts(script):
    """(first line, body) of every heredoc of `script` whose body is a shell
    script: what the script writes to a file to run later."""
    found = []
    lines = script.split("\n")
    index = 0
    while index < len(lines):
        match = HEREDOC.search(lines[index])
        index += 1
        if not match or lines[index - 1].lstrip().startswith("#"):
            continue
        strip_tabs, _, delimiter = match.groups()
        start = index
        while index < len(lines):
            line = lines[index].lstrip("\t") if strip_tabs else lines[index]
            if line == delimiter:
                break
            index += 1
        body = "\n".join(lines[start:index]) + "\n"
        index += 1
        if interpreter(body):
            found.append((lines[start - 1].strip(), body))
    return found


def shell_scripts_of(where, script):
    """The script and every script it embeds, each with a name."""
    scripts = [(where, script)]
    for opening, body in embedded_scripts(script):
        scripts.append((f"{where}, the script of `{opening}`", body))
    return scripts


def run_shellcheck(scripts, shellcheck, report):
    """Runs shellcheck at severity warning over every (name, script)."""
    if not scripts:
        return
    report.shell_scripts += len(scripts)
    with tempfile.TemporaryDirectory() as directory:
        files = {}
        for number, (name, script) in enumerate(scripts):
            path = os.path.join(directory, f"script-{number}.sh")
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
                handle.write(script)
            files[path] = name
        result = subprocess.run(
            [shellcheck, "--severity=warning", "--format=gcc", *files],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode not in (0, 1) or (result.returncode == 1 and not result.stdout):
            raise RuntimeError(f"shellcheck failed to run: {result.stderr.strip()}")
        for line in result.stdout.splitlines():
            path, _, rest = line.partition(":")
            report.problem(files.get(path, path), f"shellcheck: line {rest}")


def check_mime(where, text, report, scripts):
    declared = declared_parts(text)
    if declared is None:
        report.problem(where, "MIME user data without a multipart boundary")
        return
    if not declared:
        report.problem(where, "MIME user data with no part between its boundaries")
        return
    parts = cloud_init_parts(text)
    got = [kind for kind, _ in parts]
    report.mime_parts += len(parts)
    if got != declared:
        declared = [kind or "no Content-Type header" for kind in declared]
        report.problem(where, f"cloud-init made parts {got} of the declared {declared}")
        return
    for number, (kind, payload) in enumerate(parts, start=1):
        part = f"{where}, part {number} ({kind})"
        check_part(part, kind, payload, report, scripts)
    check_delivery(where, text, parts, report)


def check_part(where, kind, payload, report, scripts):
    if kind == "text/x-shellscript":
        if interpreter(payload):
            scripts.extend(shell_scripts_of(where, payload))
        else:
            report.problem(where, "a shell part that does not start with a shell's `#!` line")
    elif kind == "text/cloud-boothook":
        # cloud-init drops a leading `#cloud-boothook` line and runs the rest.
        script = payload.removeprefix("#cloud-boothook").lstrip()
        if interpreter(script):
            scripts.extend(shell_scripts_of(where, script))
        else:
            report.problem(where, "a boothook that does not start with a shell's `#!` line")
    elif kind in ("application/node.eks.aws", "text/cloud-config"):
        try:
            document = load_yaml(payload)
        except Exception as error:  # cloud-init's loader raises several kinds
            report.problem(where, f"not YAML: {error}")
            return
        report.yaml_documents += 1
        if not isinstance(document, dict):
            report.problem(where, "not a YAML mapping")
            return
        if kind == "application/node.eks.aws" and document.get("kind") != "NodeConfig":
            report.problem(where, f"kind is {document.get('kind')!r}, not NodeConfig")
        for entry in document.get("write_files", []) if kind == "text/cloud-config" else []:
            content = entry.get("content", "") if isinstance(entry, dict) else ""
            if isinstance(content, str) and interpreter(content):
                name = entry.get("path", "?")
                scripts.extend(shell_scripts_of(f"{where}, write_files {name}", content))
    else:
        report.problem(where, f"a part of type {kind}, which this checker does not know")


def check_user_data(where, text, report, scripts):
    """Checks one resolved user data; shell scripts are collected in
    `scripts` for one shellcheck run."""
    report.user_data += 1
    head = text[:4096].lower()
    # Meant as MIME when it says so anywhere in its head: cloud-init looks
    # for `MIME-Version:` the same way.
    if "mime-version:" in head or head.startswith("content-type: multipart/"):
        check_mime(where, text, report, scripts)
    elif text.startswith("#!"):
        parts = cloud_init_parts(text)
        report.mime_parts += len(parts)
        kinds = [kind for kind, _ in parts]
        if kinds != ["text/x-shellscript"]:
            report.problem(where, f"cloud-init reads the script as {kinds}")
        elif not interpreter(text):
            report.problem(where, "a script that no shell runs")
        else:
            scripts.extend(shell_scripts_of(where, text))
    elif text.lstrip().lower().startswith("<powershell>"):
        report.powershell_skipped += 1
    else:
        try:
            settings = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            report.problem(where, f"neither MIME, a script, PowerShell nor TOML: {error}")
            return
        report.toml_documents += 1
        if "settings" not in settings:
            report.problem(where, "Bottlerocket TOML without a `settings` table")


def check_template(where, template, report, scripts):
    report.templates += 1
    try:
        user_data = user_data_of(template)
    except Unresolvable as error:
        report.problem(where, str(error))
        return
    for name, text in user_data:
        check_user_data(f"{where} {name}", text, report, scripts)


def synthesize_blueprint(eksynth, blueprint):
    """The template of a one-stack blueprint, as JSON."""
    result = subprocess.run(
        [eksynth, "synth", blueprint, "--format", "json"], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"{blueprint}: eksynth synth failed:\n{result.stderr}")
    return json.loads(result.stdout)


def synthesize(eksynth, template_path):
    """The committed template `examples/X/NAME.yaml` as JSON, synthesized
    from its blueprint."""
    path = Path(template_path)
    result = subprocess.run(
        [eksynth, "synth", str(path.parent / "blueprint.yaml"), "--format", "json", "--stack", path.stem],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{template_path}: eksynth synth failed:\n{result.stderr}")
    return json.loads(result.stdout)


def is_template(path):
    with open(path, encoding="utf-8") as handle:
        return handle.readline().startswith("AWSTemplateFormatVersion")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--eksynth", required=True, help="the eksynth binary")
    parser.add_argument("--shellcheck", default="shellcheck", help="the shellcheck binary")
    parser.add_argument(
        "--blueprint", action="append", default=[], help="a one-stack blueprint whose template is checked too"
    )
    parser.add_argument("files", nargs="*", help="example files; those that are templates are checked")
    args = parser.parse_args(argv)
    report = Report()
    scripts = []
    for blueprint in args.blueprint:
        check_template(blueprint, synthesize_blueprint(args.eksynth, blueprint), report, scripts)
    for path in args.files:
        if is_template(path):
            check_template(path, synthesize(args.eksynth, path), report, scripts)
    run_shellcheck(scripts, args.shellcheck, report)
    for problem in report.problems:
        print(f"error: {problem}")
    print(f"user data consumers: {report.summary()}")
    if report.checked() == 0:
        print("error: no user data was checked at all", file=sys.stderr)
        return 1
    if report.problems:
        print(f"error: {len(report.problems)} problems", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
