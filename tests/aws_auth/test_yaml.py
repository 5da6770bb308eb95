"""Tests of the aws-auth provider's mapRoles reader and writer
(blueprints/aws-auth/aws_auth.py): each YAML construct tools write, real
ConfigMaps (fixtures/map-roles/), and seeded differential tests against
PyYAML and against go-yaml v2, the EKS authenticator's YAML library
(goyaml/main.go). Run from the repository root:

    python3 -m unittest discover -s tests/aws_auth -v
"""
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

import test_provider as base  # the provider, its fake servers and helpers

provider, yaml, entries, entry, role, event = (
    base.provider, base.yaml, base.entries, base.entry, base.role, base.event)
HERE, FIXTURES, USERNAME, NODE_GROUPS = base.HERE, base.FIXTURES, base.USERNAME, base.NODE_GROUPS
FOREIGN_MAP_ROLES, FOREIGN_MAP_USERS = base.FOREIGN_MAP_ROLES, base.FOREIGN_MAP_USERS
# The fake servers, started for this module's tests too (base.KUBE is the
# fake API server then).
setUpModule, tearDownModule = base.setUpModule, base.tearDownModule


# One document per construct that kubectl, eksctl, EKS, the console or people
# write, each holding a node mapping of our own (OURS) beside foreign ones.
OURS_ARN = "arn:aws:iam::111122223333:role/nodes"
CONSTRUCTS = {
    "a flow list with colons": "- rolearn: arn:aws:iam::111122223333:role/ops\n  username: ops\n"
                               "  groups: [system:masters]\n",
    "anchors and aliases": "- rolearn: &arn arn:aws:iam::111122223333:role/ops\n  username: *arn\n"
                           "  groups: &g [system:masters]\n- rolearn: arn:aws:iam::111122223333:role/ro\n"
                           "  username: ro\n  groups: *g\n",
    "a folded block scalar": "- rolearn: arn:aws:iam::111122223333:role/ops\n  username: >-\n    ops:{{SessionName}}\n"
                             "  groups:\n  - system:masters\n",
    "document markers": "---\n- rolearn: arn:aws:iam::111122223333:role/ops\n  username: ops\n  groups: []\n...\n",
    "null": "- rolearn: arn:aws:iam::111122223333:role/ops\n  username: ops\n  groups: null\n  sso: !!str null\n",
    "quoted keys": "- !!str \"rolearn\": 'arn:aws:iam::111122223333:role/ops'\n  &u 'username': \"ops\"\n"
                   "  \"groups\": [*u]\n",
    "CRLF": "- rolearn: arn:aws:iam::111122223333:role/ops\r\n  username: \"ops\r\n    {{SessionName}}\"\r\n"
            "  groups:\r\n  - system:masters\r\n",
    "a merge key": "- &base\n  rolearn: arn:aws:iam::111122223333:role/ops\n  username: ops\n  groups: [a]\n"
                   "- <<: *base\n  rolearn: arn:aws:iam::111122223333:role/ops2\n",
    "a literal block scalar": "- rolearn: arn:aws:iam::111122223333:role/ops\n  username: ops\n  groups: []\n"
                              "  x-note: |+\n    kept\n\n",
}
FIXTURE_MAP_ROLES = sorted((FIXTURES / "map-roles").glob("*.yaml"))


def read(path):
    return path.read_bytes().decode()


class YamlTest(unittest.TestCase):
    def test_reads_each_construct_tools_write(self):
        for name, text in CONSTRUCTS.items():
            with self.subTest(name):
                got = entries(text)
                self.assertEqual(got[0]["rolearn"], "arn:aws:iam::111122223333:role/ops")
                if yaml:
                    self.assertEqual(meaning(got), yaml.safe_load(text))

    def test_reads_real_world_config_maps(self):
        self.assertEqual(len(FIXTURE_MAP_ROLES), 5)
        for path in FIXTURE_MAP_ROLES:
            with self.subTest(path.name):
                got = entries(read(path))
                self.assertGreater(len(got), 0)
                if yaml:
                    self.assertEqual(meaning(got), yaml.safe_load(read(path)))

    def test_an_empty_or_missing_map_roles_is_an_empty_list(self):
        for text in ["", "  \n", "# nothing yet\n", "[]", "null", "~", "---\n", "--- []\n...\n"]:
            self.assertEqual(entries(text), [], repr(text))
        ours = entry(OURS_ARN)
        for text in ["", "# nothing yet\n", "[]", "null"]:
            added = provider.edit_map_roles(text, None, ours)
            self.assertEqual(entries(added), [ours], repr(text))
            self.assertEqual(entries(provider.edit_map_roles(added, ours, None)), [])
            self.assertIsNone(provider.edit_map_roles(text, ours, None))

    def test_merge_keys_follow_go_yaml_v2_where_pyyaml_differs(self):
        # go-yaml v2 (the authenticator's) applies '<<' where it stands, so a
        # merged key after the mapping's own one wins; PyYAML keeps the own.
        self.assertEqual(entries("- a: 1\n  <<: {a: 2}\n")[0]["a"], provider.Special("2"))
        self.assertEqual(entries("- <<: [{a: 1}, {a: 2, b: 3}]\n")[0],
                         {"a": provider.Special("1"), "b": provider.Special("3")})

    def test_an_anchor_defined_again_is_read_as_go_yaml_v2_reads_it(self):
        # PyYAML refuses this; go-yaml v2 lets the later definition win.
        self.assertEqual(entries("- a: &x 1\n  b: *x\n  c: &x 2\n  d: *x\n")[0]["d"], provider.Special("2"))

    def test_typed_scalars_are_kept_as_written(self):
        # go-yaml v2 reads y, n and 1e3 as a bool and a number, PyYAML as
        # strings: neither is a string the authenticator takes, and both are
        # written back exactly as they were.
        got = entries("- rolearn: y\n  username: 1e3\n  groups: [0o17, 1:20, no]\n")
        self.assertEqual(got[0]["rolearn"], provider.Special("y"))
        self.assertEqual(provider.emit_entries(got), "- rolearn: y\n  username: 1e3\n  groups:\n    - 0o17\n"
                                                     "    - 1:20\n    - no\n")
        self.assertFalse(provider.maps_role({"rolearn": provider.Special("y")}, "y"))

    def test_keys_match_as_the_authenticator_matches_them(self):
        # Go's JSON decoding matches field names case-insensitively.
        self.assertTrue(provider.maps_role({"RoleArn": OURS_ARN}, OURS_ARN))
        self.assertTrue(provider.maps_role({"RoleArn": "x", "rolearn": OURS_ARN}, OURS_ARN))

    def test_refuses_what_it_cannot_read_with_certainty(self):
        for text in [
            "- a: !!int 1\n",  # tags other than !!str
            "- a: !custom x\n",
            "- ? a\n  : b\n",  # complex keys
            "- {[a]: b}\n",
            "- a: b\n---\n- c: d\n",  # a second document
            "%TAG ! tag:example.com,2000:\n---\n- a: b\n",
            "- a: b\n\t- c\n",  # tabs
            "- a: b\tc\n",
            "- a: *undefined\n",
            "- a: <<\n",
            "- a: =\n",
            "- groups: [a:]\n",  # go-yaml v2 reads 'a:', PyYAML {a: null}
            "- groups: [a?b]\n",
            '- a: "\\ud83d\\ude00"\n',  # surrogates
            '- a: "\\q"\n',
            '- a: "open\n',
            "- a: b\n   c: d\n",  # bad indentation
            "- a: 'x'y\n",
            "- a: b: c\n",
            "rolearn: x\n",  # not a list
            "- [a, b]\n",
            "- a\n",
            "- a: \u2028\n",  # a line break only YAML 1.1 knows
            "...\n",  # a document end without a document
            "  %YAML 1.1\n---\n- a: b\n",
            "%YAML 1.1#\n---\n- a: b\n",
            "- [a,\n...\n]\n",
            "- &a &b x: y\n",  # two anchors on one node
            "- groups: {x :[a]}\n",  # go-yaml v2 reads the key 'x :' and fails, PyYAML {x: [a]}
            "- a: |\n    \tx\n",  # a tab where go-yaml v2 looks for indentation
            '- a: "\\/"\n',  # an escape go-yaml v2 does not know
            "- a: &x 1\n  b: &y *x\n",  # an anchor on an alias
            "- a: &x\n    &y\n    - b\n",  # two anchors on one node, on two lines
            "- a: &x\n    &y b\n",
            "- a: |\n\n      \n    x\n",  # a leading empty line indented more than the text
        ]:
            with self.assertRaises(provider.YamlError, msg=repr(text)):
                provider.parse_map_roles(text)

    def test_aliases_cannot_blow_up(self):
        text = "- a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        for k in range(1, 8):
            text += "  a%d: &a%d [%s]\n" % (k, k, ", ".join(["*a" if k == 1 else "*a%d" % (k - 1)] * 10))
        with self.assertRaises(provider.YamlError):
            entries(text)

    def test_canonical_form_keeps_meaning(self):
        tricky = [{"rolearn": "arn:aws:iam::111122223333:role/a", "username": s, "groups": [s]} for s in [
            "yes", "no", "on", "null", "~", "1", "0x1F", "1:20", "1e3", "-", "a: b", "a #b", "#x", "tail:",
            "with space", "quote\"d", "it's", "\u00e9\u4e2d", "line\nbreak", "{{x}}", "@at", "`tick", "%pct",
            "", " lead", "trail ", "a,b", "[x]", "*star", "&amp", "!bang", "|pipe", ">gt", "?q", "\x7f", "y", "<<"]]
        tricky.append({"sso": {"permissionSetName": "Admin", "accountID": "111122223333"}, "x": [[], {}, [["a"]]]})
        text = provider.emit_entries(tricky)
        self.assertEqual(entries(text), tricky)
        if yaml:
            self.assertEqual(yaml.safe_load(text), tricky)
        specials = entries("- a: true\n  b: 1.5\n  c:\n  d: ~\n  e: [1, null]\n")
        self.assertEqual(entries(provider.emit_entries(specials)), specials)
        self.assertIn("a: true", provider.emit_entries(specials))

    def test_textual_edits_keep_foreign_bytes(self):
        ours = entry(role("nodes"))
        added = provider.edit_map_roles(FOREIGN_MAP_ROLES, None, ours)
        self.assertTrue(added.startswith(FOREIGN_MAP_ROLES))
        self.assertEqual(provider.edit_map_roles(added, ours, None), FOREIGN_MAP_ROLES)
        self.assertIsNone(provider.edit_map_roles(added, None, ours))
        indented = "  - rolearn: x\n    username: y  # keep\n"
        self.assertEqual(provider.edit_map_roles(indented, None, ours)[:len(indented)], indented)
        self.assertEqual(entries(provider.edit_map_roles(indented, None, ours)), entries(indented) + [ours])
        no_newline = "- rolearn: x\n  username: y"
        self.assertEqual(entries(provider.edit_map_roles(no_newline, None, ours)), entries(no_newline) + [ours])
        for name, text in list(CONSTRUCTS.items()) + [(p.name, read(p)) for p in FIXTURE_MAP_ROLES]:
            with self.subTest(name):
                added = provider.edit_map_roles(text, None, ours)
                self.assertEqual(entries(added), entries(text) + [ours])
                removed = provider.edit_map_roles(added, ours, None)
                if text.lstrip().startswith("-") or text.startswith("---"):  # a block list: bytes kept
                    self.assertEqual(removed, text)
                else:
                    self.assertEqual(entries(removed), entries(text))

    def test_an_entry_holding_an_anchor_others_use_is_rewritten_not_cut(self):
        ours = entry(role("nodes"))
        text = provider.emit_entries([ours]).replace("- rolearn", "- &ours\n  rolearn") + "- *ours\n"
        self.assertEqual(entries(provider.edit_map_roles(text, ours, None)), [])
        text = provider.emit_entries([ours]).replace("groups:", "groups: &g") + "- rolearn: x\n  groups: *g\n"
        self.assertEqual(entries(provider.edit_map_roles(text, ours, None)),
                         [{"rolearn": "x", "groups": NODE_GROUPS}])


class ConstructsTest(base.ProviderCase):
    """Create, Update and Delete through the fake API server on every
    construct; foreign entries keep their data."""

    def test_create_update_delete_on_every_construct(self):
        for name, text in list(CONSTRUCTS.items()) + [(p.name, read(p)) for p in FIXTURE_MAP_ROLES]:
            with self.subTest(name):
                base.KUBE.state.seed({"mapRoles": text})
                foreign = entries(text)
                created = event("Create", OURS_ARN)
                pid = self.assertSuccess(created)["PhysicalResourceId"]
                self.assertEqual(entries(base.KUBE.state.data()["mapRoles"]), foreign + [entry(OURS_ARN)])
                windows = NODE_GROUPS + ["eks:kube-proxy-windows"]
                old = created["ResourceProperties"]
                self.assertSuccess(event("Update", OURS_ARN, windows, old=old, pid=pid))
                self.assertEqual(entries(base.KUBE.state.data()["mapRoles"]), foreign + [entry(OURS_ARN, windows)])
                self.assertSuccess(event("Delete", OURS_ARN, windows, pid=pid))
                self.assertEqual(entries(base.KUBE.state.data()["mapRoles"]), foreign)

    def test_delete_succeeds_without_writing_on_what_it_cannot_read(self):
        text = "- rolearn: !custom x\n" + provider.emit_entries([entry(OURS_ARN)])
        base.KUBE.state.seed({"mapRoles": text})
        self.assertFailed(event("Create", role("other")), "cannot read with certainty")
        self.assertSuccess(event("Delete", OURS_ARN, pid="aws-auth/demo/" + OURS_ARN))
        self.assertEqual(base.KUBE.state.writes, 0)
        self.assertEqual(base.KUBE.state.data()["mapRoles"], text)

    def test_delete_succeeds_without_writing_when_the_rewrite_cannot_be_proven(self):
        text = json.dumps([entry(OURS_ARN), entry(role("other"))])  # a flow list is rewritten
        base.KUBE.state.seed({"mapRoles": text}, {OURS_ARN: [base.owner()]})
        with mock.patch.object(provider, "emit_entries", return_value="[]"):
            self.assertFailed(event("Create", role("third")), "without losing entries")
            self.assertSuccess(event("Delete", OURS_ARN, pid="aws-auth/demo/" + OURS_ARN))
        self.assertEqual(base.KUBE.state.writes, 0)
        self.assertIn("left as it is", self.out.getvalue())

    def test_a_request_reads_map_roles_once_and_its_edit_once(self):
        # The text the API server sent is read once; the edited text is read
        # once more, to prove it holds exactly the expected entries.
        for name, text in [("a block list, edited as text", FOREIGN_MAP_ROLES),
                           ("a flow list, rewritten", json.dumps([entry(role("other"))]))]:
            with self.subTest(name):
                base.KUBE.state.seed({"mapRoles": text})
                with mock.patch.object(provider, "parse_map_roles", wraps=provider.parse_map_roles) as parse:
                    self.assertSuccess(event("Create", OURS_ARN))
                self.assertEqual([c.args[0] for c in parse.call_args_list],
                                 [text, base.KUBE.state.data()["mapRoles"]])

    def test_config_maps_without_map_roles(self):
        for data in [{}, {"mapRoles": ""}, {"mapRoles": "[]"}, {"mapUsers": FOREIGN_MAP_USERS}]:
            with self.subTest(data):
                base.KUBE.state.seed(data)
                self.assertSuccess(event("Create", OURS_ARN))
                self.assertEqual(entries(base.KUBE.state.data()["mapRoles"]), [entry(OURS_ARN)])
                self.assertSuccess(event("Delete", OURS_ARN, pid="aws-auth/demo/" + OURS_ARN))
                self.assertEqual(entries(base.KUBE.state.data()["mapRoles"]), [])
                self.assertEqual(base.KUBE.state.data().get("mapUsers"), data.get("mapUsers"))


ATOMS = ["a", "system:nodes", "arn:aws:iam::111122223333:role/x", USERNAME, "yes", "no", "on", "true", "null",
         "~", "1", "0x10", "1:20", "1.5", "-1", ".5", "a b", "a#b", "a #b", "a: b", "a:b", "-a", "- a", "?a", ":a",
         "a,b", "[a]", "{a}", "a]", "it's", 'q"q', "", " x", "x ", "\u00e9", "tab\tx", "#", "@", "%", "&x", "*x",
         "!x", "|", ">", "'", '"', "a\\b", "=", "<<", "y", "2001-12-14", "1_000", ".inf", "NaN", "a{b", "{{x}}",
         "1e3", "0o17", "0b101", "Y", "Off", "+1", "~x", "multi\nline", "trail\n\n", "\tlead", "x\u00a0y"]
WORDS = ["a", "system:nodes", "x-y", "{{SessionName}}", "1", "it's", "b c", "#no-comment", "\u00e9"]


def random_map_roles(r):
    """A random mapRoles, valid YAML or not, in the styles tools write."""
    def scalar():
        s = r.choice(ATOMS)
        return r.choice([s, s, "'%s'" % s.replace("'", "''"), json.dumps(s)])

    def flow_list():
        return "[" + ", ".join(scalar() for _ in range(r.randint(0, 3))) + "]"

    if r.random() < 0.2:
        items = ["{" + ", ".join(scalar() + r.choice([": ", ":", " : "]) + r.choice([scalar(), flow_list()])
                                 for _ in range(r.randint(0, 3))) + r.choice(["", ","]) + "}"
                 for _ in range(r.randint(0, 3))]
        return r.choice(["", "# c\n"]) + "[" + ", ".join(items) + "]" + r.choice(["", "\n", " # t\n"])
    pad, out = " " * r.choice([0, 0, 2]), []
    for _ in range(r.randint(0, 3)):
        lead = pad + "- "
        for _ in range(r.randint(1, 3)):
            key = scalar() if r.random() < 0.3 else r.choice(["rolearn", "username", "groups", "x"])
            key += r.choice([": ", ": ", ":", " : "])
            kind = r.random()
            if kind < 0.6:
                out.append(lead + key + scalar() + r.choice(["", "", " # comment"]))
            elif kind < 0.8:
                out.append(lead + key.rstrip())
                out += [pad + r.choice(["  ", "    "]) + "- " + scalar() for _ in range(r.randint(0, 3))]
            else:
                out.append(lead + key + flow_list())
            lead = pad + "  "
        out += [pad + "# between"] * (r.random() < 0.1)
    return "\n".join(out) + r.choice(["", "\n"])


class StyleGenerator:
    """Valid mapRoles documents in every style YAML offers, from random data."""

    def __init__(self, r):
        self.r, self.anchors, self.maps = r, 0, []

    def data(self, depth=0):
        r = self.r
        k = r.random()
        if depth < 2 and k < 0.15:
            return {self.key(): self.data(depth + 1) for _ in range(r.randint(0, 3))}
        if depth < 2 and k < 0.35:
            return [self.data(depth + 1) for _ in range(r.randint(0, 3))]
        return r.choice(ATOMS + WORDS)

    def key(self):
        return self.r.choice(["rolearn", "username", "groups", "x-note", "sso", "userid"] + ATOMS[:12])

    def entries(self):
        return [{self.key(): self.data() for _ in range(self.r.randint(1, 4))} for _ in range(self.r.randint(0, 4))]

    def scalar(self, s, ind, block_ok):
        r, styles = self.r, ["single", "double"]
        if s and provider.PLAIN_SAFE.fullmatch(s) or provider.SPECIAL_RE.match(s) and "\n" not in s:
            styles += ["plain"] * 3
        if block_ok and s.strip(" \n") and not s.startswith((" ", "\n")) and "\t" not in s:
            styles.append("block")
        style = r.choice(styles)
        if style == "plain":
            return s
        if style == "single":
            t = "'%s'" % s.replace("'", "''").replace("\n", "\n\n")
            return t.replace(" ", "\n" + " " * (ind + 2), 1) if " " in t and r.random() < 0.3 else t
        if style == "double":
            t = json.dumps(s)
            t = t.replace("a", "\\x61") if r.random() < 0.2 else t
            t = t.replace("\\t", "\t") if r.random() < 0.5 else t
            return t.replace(" ", "\n" + " " * (ind + 2) + r.choice(["", "\\ "]), 1) if r.random() < 0.3 else t
        head = r.choice(["|", ">"]) + r.choice(["", "-", "+"])
        m = r.choice([0, 2]) if ind >= 0 else 0
        if m:
            head = head[0] + r.choice([head[1:] + "2", "2" + head[1:]])
        body = s.rstrip("\n").split("\n")
        pad = " " * (max(ind, 0) + (m or 2))
        lines = [(pad + line).rstrip() if line else "" for line in body] + [""] * r.randint(0, 2)
        return head + r.choice(["", " # c"]) + "\n" + "\n".join(lines)

    def node(self, v, ind, compact=False):
        """The text after '- ' or 'key: ' for v, whose parent is at ind."""
        r = self.r
        if r.random() < 0.1 and self.maps:
            return "*" + r.choice(self.maps)[0]
        anchor = ""
        if r.random() < 0.15:
            self.anchors += 1
            anchor = "&a%d " % self.anchors
        if isinstance(v, (list, dict)) and v and r.random() < 0.7:
            inner = ind + r.choice([2, 4])
            lines = self.block(v, inner, indentless=isinstance(v, list) and not compact and r.random() < 0.5)
            if isinstance(v, dict) and anchor:
                self.maps.append((anchor[1:-1], v))
            return anchor.rstrip() + "\n" + "\n".join(lines)
        if isinstance(v, (list, dict)):
            if isinstance(v, dict) and anchor:
                self.maps.append((anchor[1:-1], v))
            return anchor + self.flow(v)
        return anchor + self.scalar(v, ind, True)

    def flow(self, v):
        r = self.r
        if isinstance(v, list):
            items = [self.flow(x) for x in v]
            return "[" + r.choice([", ", ",", ",\n  "]).join(items) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(json.dumps(k) + r.choice([": ", ":"]) + self.flow(x) for k, x in v.items()) + "}"
        return json.dumps(v) if r.random() < 0.5 or not provider.PLAIN_SAFE.fullmatch(v) else v

    def block(self, v, ind, indentless=False):
        r, pad, out = self.r, " " * ind, []
        if isinstance(v, list):
            pad = " " * (ind - 2) if indentless else pad
            for x in v:
                if isinstance(x, dict) and x and r.random() < 0.6:
                    sub = self.block(x, len(pad) + 2)
                    out += [pad + "- " + sub[0].lstrip(" ")] + sub[1:]
                else:
                    out.append(pad + "- " + self.node(x, len(pad), compact=True))
            return out
        if self.maps and r.random() < 0.2:
            out.append(pad + "<<: *" + r.choice(self.maps)[0])
        for k, x in v.items():
            if "\n" in k:
                continue  # a key is one line
            plain = r.random() < 0.5 and provider.PLAIN_SAFE.fullmatch(k)
            key = k if plain else r.choice([json.dumps(k), "'%s'" % k.replace("'", "''")])
            self.anchors += 1  # PyYAML refuses an anchor defined twice, go-yaml v2 does not
            key = r.choice(["", "", "", "!!str ", "&k%d " % self.anchors]) + key
            out.append(pad + key + ": " + self.node(x, ind))
            if r.random() < 0.1:
                out.append(pad + "# a comment")
        return out

    def document(self):
        r = self.r
        entries = self.entries()
        if r.random() < 0.15:
            text = self.flow(entries)
        else:
            text = "\n".join(self.block(entries, r.choice([0, 0, 2]))) if entries else ""
        text = r.choice(["", "", "---\n", "--- # start\n", "%YAML 1.1\n---\n", "# comment\n"]) + text
        text += r.choice(["\n", "\n", "", "\n# end\n"] + ["\n...\n"] * bool(entries))
        return text.replace("\n", "\r\n") if r.random() < 0.2 else text


def meaning(value):
    """What a YAML 1.1 reader makes of a parsed value."""
    if isinstance(value, provider.Special):  # a plain scalar, as PyYAML types it
        loader = yaml.SafeLoader("")
        tag = loader.resolve(yaml.ScalarNode, value.raw, (True, False))
        return loader.construct_object(yaml.ScalarNode(tag, value.raw))
    if isinstance(value, list):
        return [meaning(v) for v in value]
    if isinstance(value, dict):
        return {meaning(k): meaning(v) for k, v in value.items()}
    return value


# Skipped without PyYAML, except under CI (`CI` set, as .ci/run sets it
# after installing PyYAML), where a missing one fails.
@unittest.skipUnless(yaml or os.environ.get("CI"), "PyYAML is not installed")
class DifferentialTest(unittest.TestCase):
    def setUp(self):
        self.assertIsNotNone(yaml, "PyYAML is not installed (.ci/run installs it)")

    def check_edits(self, text, theirs):
        ours_entry = entry(role("nodes"))  # a role no generated document maps: every edit must succeed
        added = provider.edit_map_roles(text, None, ours_entry)
        self.assertEqual(yaml.safe_load(added), theirs + [ours_entry], text)
        self.assertEqual(yaml.safe_load(provider.edit_map_roles(added, ours_entry, None)) or [], theirs, text)

    def test_reads_every_style_as_pyyaml_does(self):
        r, read = random.Random(20251127), 0
        for _ in range(3000):
            text = StyleGenerator(r).document()
            try:
                theirs = yaml.safe_load(text)
            except yaml.YAMLError:  # the generator's rare invalid text
                self.assertRaises(provider.YamlError, provider.parse_map_roles, text)
                continue
            try:
                ours = provider.parse_map_roles(text)[0]
            except provider.YamlError as err:
                self.fail("%s\n%r" % (err, text))
            self.assertEqual(meaning(ours), theirs or [], text)
            read += 1
            self.assertEqual(yaml.safe_load(provider.emit_entries(ours) or "[]"), theirs or [], text)
            self.check_edits(text, theirs or [])
        self.assertGreater(read, 2500)

    def test_reads_what_pyyamls_emitter_writes_in_each_of_its_styles(self):
        r = random.Random(20251129)
        for _ in range(600):
            data = StyleGenerator(r).entries()
            text = yaml.safe_dump(data, default_flow_style=r.choice([False, True, None]), width=r.choice([10, 30, 80]),
                                  allow_unicode=r.random() < 0.5, indent=r.choice([2, 4]),
                                  explicit_start=r.random() < 0.3, explicit_end=r.random() < 0.2,
                                  default_style=r.choice([None, None, "'", '"', "|", ">"]))
            self.assertEqual(meaning(entries(text)), yaml.safe_load(text), text)

    def test_reads_what_pyyaml_reads_or_refuses(self):
        r, read = random.Random(20240229), 0
        for _ in range(4000):
            text = random_map_roles(r)
            try:
                ours = provider.parse_map_roles(text)[0]
            except provider.YamlError:
                continue  # refusing is always safe
            theirs = yaml.safe_load(text) or []  # raises if PyYAML cannot read what we read
            self.assertEqual(meaning(ours), theirs, text)
            read += 1
            self.assertEqual(yaml.safe_load(provider.emit_entries(ours) or "[]"), theirs, text)
            self.check_edits(text, theirs)
        self.assertGreater(read, 1000)


GO_YAML = pathlib.Path("/usr/share/gocode/src/gopkg.in/yaml.v2")
GO_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
GO_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
GO_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]| )[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]{1,9})?"
                          r"(Z|[-+][0-9]{2}:[0-9]{2})?)?")


def go_int(s):
    """Go's strconv.ParseInt(s, 0, 64), then ParseUint: None when neither takes s."""
    sign, digits = (-1, s[1:]) if s[:1] == "-" else (1, s[1:] if s[:1] == "+" else s)
    base = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}.get(digits[:2])
    digits = digits[2:] if base else digits[1:] if digits[:1] == "0" and len(digits) > 1 else digits
    base = base or (8 if s.lstrip("+-")[:1] == "0" and len(s.lstrip("+-")) > 1 else 10)
    if not digits or not all(c in "0123456789abcdefABCDEF"[:base + 6 * (base == 16)] for c in digits):
        return None
    value = sign * int(digits, base)
    return value if -2 ** 63 <= value < 2 ** 64 and (sign > 0 or s[:1] == "-") else None


def go_scalar(raw):
    """A plain scalar as go-yaml v2 2.4.0 resolves it (resolve.go) when it
    decodes into interface{}: timestamps stay strings there."""
    if raw in ("", "~", "null", "Null", "NULL"):
        return None
    if raw in GO_TRUE or raw in GO_FALSE:
        return raw in GO_TRUE
    if raw.lstrip("+-") in (".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN") and raw[:1] != "+" * (raw[1:2] == "n"):
        return float("nan")  # JSON cannot hold it: the authenticator fails on it as a whole
    if raw[:1] == ".":
        try:
            return float(raw) if "_" not in raw else raw
        except ValueError:
            return raw
    if raw[:1] in "+-0123456789" and raw:
        if GO_TIMESTAMP.fullmatch(raw):
            return raw
        plain = raw.replace("_", "")
        value = go_int(plain)
        if value is not None:
            return value
        if GO_FLOAT.fullmatch(plain):
            return float(plain)
        if plain[:2] == "0b" and go_int("0b" + plain[3:] if plain[2:3] == "-" else plain) is not None:
            return go_int("0b" + plain[3:]) * (-1 if plain[2:3] == "-" else 1)
        if plain[:3] == "-0b" and go_int(plain) is None and go_int("-0b" + plain[3:]) is not None:
            return go_int("-0b" + plain[3:])
    return raw


def consumer_view(value):
    """What the authenticator's JSON holds for a value the provider read."""
    if isinstance(value, provider.Special):
        return go_scalar(value.raw)
    if isinstance(value, list):
        return [consumer_view(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            k = consumer_view(k)
            key = json.dumps(k) if isinstance(k, bool) else str(k)
            if isinstance(k, float) or k is None or key in out:
                raise ValueError("a key the comparison does not model, or two keys read as one")
            out[key] = consumer_view(v)
        return out
    return value


def finite(value):
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    if isinstance(value, list):
        return all(finite(v) for v in value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    return True


# Skipped without Go and go-yaml v2, except under CI (`CI` set, as .ci/run
# sets it after installing Debian's golang-go and golang-gopkg-yaml.v2-dev),
# where a missing one fails.
@unittest.skipUnless(shutil.which("go") and GO_YAML.is_dir() or os.environ.get("CI"), "Go or go-yaml v2 is missing")
class ConsumerTest(unittest.TestCase):
    """The provider's reader against the authenticator's own: go-yaml v2 and
    the JSON sigs.k8s.io/yaml makes of it (goyaml/main.go)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        env = dict(os.environ, GO111MODULE="off", GOPATH=str(GO_YAML.parents[2]), GOCACHE=cls.tmp.name + "/cache")
        cls.binary = cls.tmp.name + "/goyaml"
        subprocess.run(["go", "build", "-o", cls.binary, "."], cwd=HERE / "goyaml", env=env, check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def go(self, texts):
        done = subprocess.run([self.binary], input=json.dumps(texts), capture_output=True, text=True, check=True)
        return json.loads(done.stdout)

    def documents(self):
        r, out = random.Random(20251128), []
        for k in range(4000):
            text = StyleGenerator(r).document() if k % 2 else random_map_roles(r)
            out.append(text)
        return out + list(CONSTRUCTS.values()) + [read(p) for p in FIXTURE_MAP_ROLES]

    def test_what_the_provider_reads_and_writes_the_authenticator_reads_alike(self):
        texts, compared = self.documents(), 0
        ours = []
        for text in texts:
            try:
                ours.append(provider.parse_map_roles(text)[0])
            except provider.YamlError:
                ours.append(None)
        read = [i for i, o in enumerate(ours) if o is not None]
        written = [provider.emit_entries(ours[i]) for i in read]
        theirs = self.go(texts)
        rewritten = self.go(written)
        for i, again, new in zip(read, rewritten, written):
            got, text = theirs[i], texts[i]
            try:
                view = consumer_view(ours[i])
            except ValueError:
                continue
            if not finite(view):
                self.assertIn("error", got, text)  # the authenticator reads no mapping from it
                continue
            self.assertIn("json", got, "%s\n%r" % (got.get("error"), text))
            self.assertEqual(json.loads(got["json"]) or [], view, text)
            self.assertIn("json", again, "%s\n%r" % (again.get("error"), new))
            self.assertEqual(json.loads(again["json"]) or [], view, new)
            compared += 1
        self.assertGreater(compared, 2000)

    def test_go_yaml_v2_reads_what_pyyaml_reads_otherwise(self):
        # The forms where the provider follows go-yaml v2, not PyYAML.
        got = self.go(["- a: 1\n  <<: {a: 2}\n", "- a: &x 1\n  b: *x\n  c: &x 2\n  d: *x\n",
                       "- groups: [system:masters]\n", "- a: y\n  b: 1e3\n  c: 1:20\n",
                       "- groups: {x :[a]}\n", "- a: |\n    \tx\n", '- a: "\\/"\n', "- a: &x 1\n  b: &y *x\n"])
        self.assertEqual(json.loads(got[0]["json"]), [{"a": 2}])
        self.assertEqual(json.loads(got[1]["json"]), [{"a": 1, "b": 1, "c": 2, "d": 2}])
        self.assertEqual(json.loads(got[2]["json"]), [{"groups": ["system:masters"]}])
        self.assertEqual(json.loads(got[3]["json"]), [{"a": True, "b": 1000, "c": "1:20"}])
        self.assertIn("error", got[4])  # which the provider refuses too
        self.assertIn("error", got[5])
        self.assertIn("error", got[6])
        self.assertIn("error", got[7])
