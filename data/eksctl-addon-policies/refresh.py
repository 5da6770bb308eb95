#!/usr/bin/env python3
"""Re-vendors the IAM statements eksctl attaches for `iam.withAddonPolicies`.

Usage: refresh.py PATH-TO-AN-EKSCTL-CHECKOUT

eksctl writes its add-on policies as Go literals: `createRole` in
`pkg/cfn/builder/iam_helper.go` names, for each add-on field, the statement
functions of `pkg/cfn/builder/statement.go` it attaches, and the field's
YAML name is the `json` tag in `pkg/apis/eksctl.io/v1alpha5/types.go`. This
script reads the three files, evaluates the literals (they hold only
strings, lists, maps and `addARNPartitionPrefix`) and writes
`policies.json`: each add-on field with eksctl's inline policies, by name,
in the order eksctl attaches them. Afterwards record the commit in
README.md and run `cargo test --locked`.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOKEN = re.compile(
    r'\s+|//[^\n]*|(?P<tok>"(?:[^"\\]|\\.)*"|map\[string\](?:interface\{\}|string)'
    r"|\[\]\*?[\w.]+|[A-Za-z_][\w.]*|[{}(),:])"
)
CONSTANTS = {"effectAllow": "Allow", "resourceAll": "*"}


def tokens(text):
    out, pos = [], 0
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if not match:
            sys.exit(f"statement.go: cannot read {text[pos:pos + 40]!r}")
        if match.group("tok"):
            out.append(match.group("tok"))
        pos = match.end()
    return out


class Literal:
    """A Go composite literal of strings, lists and maps."""

    def __init__(self, toks, bindings):
        self.toks, self.i, self.bindings = toks, 0, bindings

    def next(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, tok):
        if self.next() != tok:
            sys.exit(f"statement.go: expected {tok!r} near token {self.i}")

    def value(self):
        tok = self.next()
        if tok.startswith('"'):
            return json.loads(tok)
        if tok == "addARNPartitionPrefix":
            self.expect("(")
            arn = "arn:${AWS::Partition}:" + self.value()
            self.expect(")")
            return arn
        if tok in CONSTANTS:
            return CONSTANTS[tok]
        if tok in self.bindings:
            return self.bindings[tok]
        if tok.startswith(("[]", "map[")):
            self.expect("{")
            return self.composite()
        if tok == "{":
            return self.composite()
        sys.exit(f"statement.go: unexpected {tok!r}")

    def composite(self):
        items, pairs = [], {}
        while self.toks[self.i] != "}":
            item = self.value()
            if self.toks[self.i] == ":":
                self.i += 1
                pairs[item] = self.value()
            else:
                items.append(item)
            if self.toks[self.i] == ",":
                self.i += 1
        self.i += 1
        if items and pairs:
            sys.exit("statement.go: a literal mixes a list and a map")
        return pairs if pairs else items


def statement_functions(text):
    """Each function of statement.go: its parameter names and its body."""
    found = {}
    pattern = re.compile(r"^func (\w+)\(([^)]*)\) \[\]cft\.MapOfInterfaces \{\n\treturn (.*?)\n\}$", re.M | re.S)
    for match in pattern.finditer(text):
        params = [p.split()[0] for p in match.group(2).split(",") if p.strip()]
        found[match.group(1)] = (params, match.group(3))
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = Path(sys.argv[1])
    statements = (root / "pkg/cfn/builder/statement.go").read_text()
    helper = (root / "pkg/cfn/builder/iam_helper.go").read_text()
    types = (root / "pkg/apis/eksctl.io/v1alpha5/types.go").read_text()

    struct = re.search(r"NodeGroupIAMAddonPolicies struct \{(.*?)\n\t\}", types, re.S)
    tags = dict(re.findall(r'(\w+) \*bool `json:"(\w+)"`', struct.group(1)))
    functions = statement_functions(statements)
    body = re.search(r"^func createRole\(.*?^\}$", helper, re.M | re.S).group(0)

    policies = {}
    blocks = re.finditer(r"if (api\.IsEnabled\(iamConfig\.WithAddonPolicies\.\w+\)(?: \|\| api\.IsEnabled\(iamConfig\.WithAddonPolicies\.\w+\))*) \{(.*?)\n\t\}", body, re.S)
    for block in blocks:
        fields = re.findall(r"WithAddonPolicies\.(\w+)", block.group(1))
        attached = []
        for name, function, args in re.findall(r'attachAllowPolicy\("(\w+)", refIR, (\w+)\(([^)]*)\)\)', block.group(2)):
            params, literal = functions[function]
            values = [json.loads(a.strip()) for a in args.split(",") if a.strip()]
            parsed = Literal(tokens(literal), dict(zip(params, values))).value()
            attached.append({"PolicyName": name, "Statement": parsed})
        for field in fields:
            policies[tags[field]] = attached
    if not policies:
        sys.exit("iam_helper.go: no add-on policy found in createRole")

    out = HERE / "policies.json"
    out.write_text(json.dumps(dict(sorted(policies.items())), indent=2) + "\n")
    commit = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%H (%cs)"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()
    print(f"vendored {len(policies)} add-on policies from eksctl {commit or root}")


if __name__ == "__main__":
    main()
