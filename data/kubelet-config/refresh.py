#!/usr/bin/env python3
"""Regenerates the KubeletConfiguration data in this folder.

Reads the Go type definitions of `kubelet.config.k8s.io/v1beta1` (and the
few types they borrow from k8s.io/apimachinery, k8s.io/api and
k8s.io/component-base) and writes:

- kubelet-config.schema.json: one JSON Schema (draft 7) fragment per field;
- windows-flags.json: the kubelet command-line flag of each field that has
  one (the `logging` flags are read from component-base; the others from
  kubernetes' cmd/kubelet/app/options/options.go when --options is given,
  else kept from the current file);

and checks that every path named in bottlerocket-settings.json and
windows-flags.json is a field of the new schema.

Sources are read from local git repositories (bare or not) at --tag, or, for
a repository not given, downloaded from raw.githubusercontent.com at --tag:

    ./refresh.py --tag v0.36.3 \
        --kubelet ~/src/kubelet --component-base ~/src/component-base --api ~/src/api \
        [--options ~/src/kubernetes/cmd/kubelet/app/options/options.go]

Standard library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

# Go's time.ParseDuration: an optional sign, then "0" or one or more
# decimal numbers with a unit each.
DURATION = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)$"
# resource.Quantity's canonical grammar (k8s.io/apimachinery).
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

# The files each type comes from: (repository, path).
FILES = {
    "kubelet": ("kubelet", "config/v1beta1/types.go"),
    "logs": ("component-base", "logs/api/v1/types.go"),
    "tracing": ("component-base", "tracing/api/v1/types.go"),
    "core": ("api", "core/v1/types.go"),
}
LOG_OPTIONS = ("component-base", "logs/api/v1/options.go")

# Types whose JSON form is not their Go structure.
SPECIAL = {
    "metav1.Duration": {"type": "string", "format": "duration", "pattern": DURATION},
    "metav1.Time": {"type": "string", "format": "date-time"},
    "resource.Quantity": {"type": ["string", "number"], "format": "quantity", "pattern": QUANTITY},
    "resource.QuantityValue": {"type": ["string", "number"], "format": "quantity", "pattern": QUANTITY},
    # A duration string, or a number of nanoseconds.
    "logs.TimeOrMetaDuration": {
        "anyOf": [
            {"type": "string", "format": "duration", "pattern": DURATION},
            {"type": "integer", "format": "int64"},
        ]
    },
}
INTEGERS = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
}
# The package alias each source file uses for the others.
ALIASES = {
    "kubelet": {"v1": "core", "logsapi": "logs", "tracingapi": "tracing"},
    "logs": {},
    "tracing": {},
    "core": {},
}


def read(args, repo, path):
    source = getattr(args, repo.replace("-", "_"))
    if source:
        if os.path.isdir(os.path.join(source, ".git")) or os.path.exists(os.path.join(source, "HEAD")):
            git = ["git", "--git-dir", source if os.path.exists(os.path.join(source, "HEAD")) else os.path.join(source, ".git")]
            text = subprocess.run(git + ["show", f"{args.tag}:{path}"], check=True, capture_output=True, text=True).stdout
            commit = subprocess.run(git + ["rev-parse", f"{args.tag}^{{commit}}"], check=True, capture_output=True, text=True).stdout.strip()
            return text, commit
        with open(os.path.join(source, path), encoding="utf-8") as f:
            return f.read(), None
    url = f"https://raw.githubusercontent.com/kubernetes/{repo}/{args.tag}/{path}"
    with urllib.request.urlopen(url) as response:
        return response.read().decode("utf-8"), None


class Package:
    """The structs, named types and string constants of one Go file."""

    def __init__(self, name, text):
        self.name = name
        self.structs = {}
        self.named = {}
        self.enums = {}
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            struct = re.match(r"^type (\w+) struct \{", line)
            named = re.match(r"^type (\w+) (\S+)$", line)
            if struct:
                fields, i = self._fields(lines, i + 1)
                self.structs[struct.group(1)] = fields
            elif named:
                self.named[named.group(1)] = named.group(2)
            else:
                const = re.match(r'^\s+\w+\s+(\w+)\s*=\s*"([^"]*)"', line)
                if const:
                    self.enums.setdefault(const.group(1), []).append(const.group(2))
            i += 1

    @staticmethod
    def _fields(lines, i):
        fields = []
        comment = []
        while not lines[i].startswith("}"):
            line = lines[i].strip()
            if line.startswith("//"):
                comment.append(line[2:].strip())
            elif line:
                m = re.match(r'^(?:(\w+)\s+)?([\w.\[\]*]+)\s+`json:"([^"]*)"', line)
                if m:
                    name, gotype, tag = m.groups()
                    if name is None:
                        name, gotype = gotype.split(".")[-1], gotype
                    json_name = tag.split(",")[0]
                    inline = ",inline" in tag
                    if json_name != "-":
                        fields.append(
                            {
                                "go": name,
                                "json": json_name,
                                "type": gotype,
                                "inline": inline,
                                "doc": first_paragraph(comment),
                            }
                        )
                comment = []
            else:
                comment = []
            i += 1
        return fields, i


def first_paragraph(comment):
    out = []
    for line in comment:
        if line.startswith("+"):
            continue
        if not line:
            if out:
                break
            continue
        out.append(line)
    return " ".join(out)


class Converter:
    def __init__(self, packages):
        self.packages = packages
        self.definitions = {}

    def resolve(self, package, gotype):
        """(package, bare name) of a possibly qualified type name."""
        if "." in gotype:
            alias, name = gotype.split(".", 1)
            return ALIASES[package].get(alias, alias), name
        return package, gotype

    def schema(self, package, gotype):
        if gotype.startswith("*"):
            return self.schema(package, gotype[1:])
        if gotype.startswith("[]"):
            return {"type": "array", "items": self.schema(package, gotype[2:])}
        m = re.match(r"^map\[([\w.]+)\](.+)$", gotype)
        if m:
            return {"type": "object", "additionalProperties": self.schema(package, m.group(2))}
        if gotype == "string":
            return {"type": "string"}
        if gotype == "bool":
            return {"type": "boolean"}
        if gotype == "float64":
            return {"type": "number"}
        if gotype in INTEGERS:
            low, high = INTEGERS[gotype]
            return {"type": "integer", "format": gotype, "minimum": low, "maximum": high}
        pkg, name = self.resolve(package, gotype)
        special = SPECIAL.get(f"{pkg}.{name}")
        if special:
            return dict(special)
        source = self.packages.get(pkg)
        if source is None:
            sys.exit(f"unknown type {gotype} in {package}")
        if name in source.structs:
            if name not in self.definitions:
                self.definitions[name] = None
                self.definitions[name] = self.struct(pkg, name)
            return {"$ref": f"#/definitions/{name}"}
        if name in source.named:
            underlying = source.named[name]
            if underlying == "string" and name in source.enums:
                return {"type": "string", "enum": source.enums[name]}
            return self.schema(pkg, underlying)
        sys.exit(f"unknown type {gotype} in {package}")

    def properties(self, package, name):
        out = {}
        for field in self.packages[package].structs[name]:
            if field["inline"]:
                pkg, inner = self.resolve(package, field["type"])
                if f"{pkg}.{inner}" == "metav1.TypeMeta":
                    continue
                out.update(self.properties(pkg, inner))
                continue
            schema = self.schema(package, field["type"])
            entry = {}
            if field["doc"]:
                entry["description"] = field["doc"]
            entry["x-go-type"] = field["type"]
            entry.update(schema)
            out[field["json"]] = entry
        return out

    def struct(self, package, name):
        return {"type": "object", "additionalProperties": False, "properties": self.properties(package, name)}


def go_to_json(converter, package, struct, go_path):
    """The JSON path of a Go selector such as Authentication.Anonymous.Enabled."""
    out = []
    pkg, name = package, struct
    for part in go_path.split("."):
        if name is None:
            break
        fields = all_fields(converter, pkg, name)
        field = next((f for f in fields if f[1]["go"] == part), None)
        if field is None:
            return None
        fpkg, f = field
        out.append(f["json"])
        inner = f["type"].lstrip("*")
        ipkg, iname = converter.resolve(fpkg, inner)
        source = converter.packages.get(ipkg)
        is_struct = source is not None and iname in source.structs
        pkg, name = (ipkg, iname) if is_struct and f"{ipkg}.{iname}" not in SPECIAL else (None, None)
    return ".".join(out)


def all_fields(converter, package, name):
    out = []
    for field in converter.packages[package].structs[name]:
        if field["inline"]:
            pkg, inner = converter.resolve(package, field["type"])
            if pkg in converter.packages and inner in converter.packages[pkg].structs:
                out.extend(all_fields(converter, pkg, inner))
            continue
        out.append((package, field))
    return out


# How a flag's value is written, by the Go call that declares it.
FLAG_FORMATS = [
    (r"NewLangleSeparatedMapStringString", "map-langle"),
    (r"NewMapStringStringNoSplit", "map-repeated"),
    (r"NewColonSeparatedMultimapStringString", "multimap-colon"),
    (r"NewMapStringString|NewMapStringBool", "map"),
    (r"ReservedMemoryVar", "reserved-memory"),
    (r"RegisterWithTaintsVar", "taints"),
    (r"VModuleConfigurationPflag", "vmodule"),
    (r"StringSliceVar", "list"),
]


def flags(converter, text, root_package, root_struct, prefix, origin):
    """Flags declared with `&c.Field...` in a Go flag-registration function."""
    out = []
    constants = dict(re.findall(r'^\s*(\w+)\s*=\s*"([\w-]+)"', text, re.M))
    pattern = re.compile(r'fs\.\w+\([^"]*?&c\.(?P<path>[\w.]+)[)}]*,\s*(?:"(?P<flag>[\w-]+)"|(?P<const>\w+))')
    for line in text.splitlines():
        m = pattern.search(line)
        if not m:
            continue
        flag = m.group("flag") or constants.get(m.group("const"))
        if flag is None:
            continue
        path = go_to_json(converter, root_package, root_struct, m.group("path"))
        if path is None:
            continue
        fmt = next((f for p, f in FLAG_FORMATS if re.search(p, line)), "scalar")
        out.append({"field": prefix + path, "flag": "--" + flag, "format": fmt, "from": origin})
    return out


def has_path(schema, path):
    node = schema
    for part in path.split("."):
        while "$ref" in node:
            node = schema["definitions"][node["$ref"].split("/")[-1]]
        props = node.get("properties", {})
        if part not in props:
            return False
        node = props[part]
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tag", default="v0.36.3", help="tag of the k8s.io staging repositories")
    parser.add_argument("--kubelet", help="git repository (or checkout) of kubernetes/kubelet")
    parser.add_argument("--component-base", help="git repository (or checkout) of kubernetes/component-base")
    parser.add_argument("--api", help="git repository (or checkout) of kubernetes/api")
    parser.add_argument("--options", help="kubernetes' cmd/kubelet/app/options/options.go")
    args = parser.parse_args()

    packages = {}
    commits = {}
    for name, (repo, path) in FILES.items():
        text, commit = read(args, repo, path)
        packages[name] = Package(name, text)
        commits[repo] = commit
    converter = Converter(packages)
    properties = converter.properties("kubelet", "KubeletConfiguration")
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": f"Generated by data/kubelet-config/refresh.py from k8s.io/kubelet {args.tag} "
        f"(config/v1beta1/types.go, commit {commits['kubelet'] or 'unknown'}); do not edit.",
        "title": "KubeletConfiguration (kubelet.config.k8s.io/v1beta1)",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "definitions": {k: converter.definitions[k] for k in sorted(converter.definitions)},
    }
    with open(os.path.join(HERE, "kubelet-config.schema.json"), "w", encoding="utf-8") as f:
        json.dump(schema, f, indent=2)
        f.write("\n")

    flags_file = os.path.join(HERE, "windows-flags.json")
    with open(flags_file, encoding="utf-8") as f:
        current = json.load(f)
    log_text, _ = read(args, *LOG_OPTIONS)
    logging = flags(converter, log_text, "logs", "LoggingConfiguration", "logging.", "component-base logs/api/v1/options.go")
    if args.options:
        with open(args.options, encoding="utf-8") as f:
            kubelet = flags(converter, f.read(), "kubelet", "KubeletConfiguration", "", "cmd/kubelet/app/options/options.go")
    else:
        kubelet = [e for e in current["flags"] if not e["field"].startswith("logging.")]
    current["flags"] = kubelet + logging
    with open(flags_file, "w", encoding="utf-8") as f:
        json.dump(current, f, indent=2, ensure_ascii=False)
        f.write("\n")

    with open(os.path.join(HERE, "bottlerocket-settings.json"), encoding="utf-8") as f:
        bottlerocket = json.load(f)
    stale = [e["field"] for e in bottlerocket["settings"] + current["flags"] if not has_path(schema, e["field"])]
    if stale:
        sys.exit("no longer KubeletConfiguration fields: " + ", ".join(stale))
    print(f"{len(properties)} fields, {len(current['flags'])} flags, {len(bottlerocket['settings'])} Bottlerocket settings")


if __name__ == "__main__":
    main()
