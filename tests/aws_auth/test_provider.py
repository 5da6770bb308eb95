"""Tests of the aws-auth custom resource provider (blueprints/aws-auth/common.py
followed by aws_auth.py, as the template embeds them).

Run from the repository root:

    python3 -m unittest discover -s tests/aws_auth -v

Everything runs offline on loopback: a fake Kubernetes API server over HTTPS
(the CA and certificate in fixtures/), a fake EKS DescribeCluster endpoint and
a fake CloudFormation response URL, both plain HTTP.
"""
import ast
import base64
import contextlib
import datetime
import hashlib
import hmac
import http.server
import importlib.util
import io
import json
import os
import pathlib
import random
import sys
import threading
import time
import unittest
import urllib.parse
import uuid
from unittest import mock

try:  # optional: the differential test compares the provider's reader with PyYAML
    import yaml
except ImportError:
    yaml = None

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SOURCES = ROOT / "blueprints" / "aws-auth"
FIXTURES = HERE / "fixtures"


def source(part):
    """A provider's code as the template embeds it: common.py, then its own part."""
    return (SOURCES / "common.py").read_bytes() + (SOURCES / part).read_bytes()


def load(name, part):
    """A provider, as a module run from the code the template embeds."""
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader=None))
    exec(compile(source(part), str(SOURCES / part), "exec"), module.__dict__)
    return module


provider = load("aws_auth_provider", "aws_auth.py")

USERNAME = "system:node:{{EC2PrivateDNSName}}"
NODE_GROUPS = ["system:bootstrappers", "system:nodes"]
ACCOUNT = "111122223333"
CM_PATH = "/api/v1/namespaces/kube-system/configmaps/aws-auth"
CM_COLLECTION = "/api/v1/namespaces/kube-system/configmaps"
OWNERS = "eksynth.io/aws-auth-owners"
ACCESS_KEY, SECRET_KEY, SESSION_TOKEN = "AKIDTESTEXAMPLE", "test/secret+key", "test-session-token"


def role(name, path="/"):
    return "arn:aws:iam::%s:role%s%s" % (ACCOUNT, path, name)


# A mapRoles written the way eksctl (go-yaml), the EKS docs and people write
# it: indentless and indented lists, quoting, comments, an unknown key.
FOREIGN_MAP_ROLES = """\
# managed by the platform team
- groups:
  - system:bootstrappers
  - system:nodes
  rolearn: arn:aws:iam::111122223333:role/eksctl-prod-nodegroup-NodeInstanceRole-1ABC
  username: system:node:{{EC2PrivateDNSName}}
- rolearn: "arn:aws:iam::111122223333:role/Admin"   # break-glass
  username: 'admin:{{SessionName}}'
  groups:
    - system:masters
  x-note: kept as is
- {rolearn: "arn:aws:iam::111122223333:role/windows", username: "system:node:{{EC2PrivateDNSName}}", groups: ["system:bootstrappers", "system:nodes", "eks:kube-proxy-windows"]}
"""
FOREIGN_MAP_USERS = "- userarn: arn:aws:iam::111122223333:user/alice\n  username: alice\n  groups:\n  - system:masters\n"
FOREIGN_OTHER = {"mapAccounts": "- \"111122223333\"\n", "x-unknown": "keep: me\n"}


def entries(text):
    return provider.parse_map_roles(text)[0]


# ------------------------------------------------------------ fake servers ---

class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        pass  # a client that hung up (the watchdog test) is no failure


class KubeState:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.cm, self.rv = None, 1000
            self.requests, self.tokens, self.writes = [], [], 0
            self.fail = {}  # method -> list of HTTP statuses to answer next
            self.delay = 0.0
            self.conflict_every, self.puts, self.forced = 0, 0, 0

    def seed(self, data, owners=None):
        """A ConfigMap holding data, and the owners annotation when given."""
        notes = {"note": "do not lose me"}
        if owners is not None:
            notes[OWNERS] = json.dumps(owners)
        with self.lock:
            self.rv += 1
            self.cm = {"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "aws-auth", "namespace": "kube-system", "uid": "u-1",
                                    "resourceVersion": str(self.rv),
                                    "labels": {"team": "platform"},
                                    "annotations": notes},
                       "data": dict(data)}

    def owners(self):
        """The owners annotation, read: {role ARN: [owner]}, or None."""
        with self.lock:
            notes = (self.cm or {}).get("metadata", {}).get("annotations") or {}
        return json.loads(notes[OWNERS]) if OWNERS in notes else None

    def data(self):
        with self.lock:
            return None if self.cm is None else dict(self.cm.get("data") or {})


class KubeHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, message):
        self.send_json(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                              "reason": reason, "message": message, "code": code})

    def do_GET(self):
        self.handle_method("GET")

    def do_PUT(self):
        self.handle_method("PUT")

    def do_POST(self):
        self.handle_method("POST")

    def handle_method(self, method):
        st = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        auth = self.headers.get("Authorization", "")
        with st.lock:
            st.requests.append((method, self.path))
            delay = st.delay
            injected = st.fail.get(method, [])
            injected = injected.pop(0) if injected else None
        if delay:
            time.sleep(delay)
        if not auth.startswith("Bearer k8s-aws-v1."):
            return self.status(401, "Unauthorized", "no EKS bearer token")
        with st.lock:
            st.tokens.append(auth[len("Bearer "):])
        if injected:
            return self.status(injected, "InternalError", "injected failure %d" % injected)
        with st.lock:
            if method == "GET" and self.path == CM_PATH:
                if st.cm is None:
                    return self.status(404, "NotFound", 'configmaps "aws-auth" not found')
                return self.send_json(200, st.cm)
            if method == "PUT" and self.path == CM_PATH:
                if st.cm is None:
                    return self.status(404, "NotFound", 'configmaps "aws-auth" not found')
                obj = json.loads(body)
                st.puts += 1
                if st.conflict_every and st.puts % st.conflict_every == 0:
                    st.forced += 1
                    return self.status(409, "Conflict", "forced conflict")
                if obj["metadata"].get("resourceVersion") != st.cm["metadata"]["resourceVersion"]:
                    return self.status(409, "Conflict", "the object has been modified")
                st.rv += 1
                obj["metadata"]["resourceVersion"] = str(st.rv)
                st.cm, st.writes = obj, st.writes + 1
                return self.send_json(200, obj)
            if method == "POST" and self.path == CM_COLLECTION:
                obj = json.loads(body)
                if obj["metadata"]["name"] != "aws-auth":
                    return self.status(422, "Invalid", "unexpected name")
                if st.cm is not None:
                    return self.status(409, "AlreadyExists", 'configmaps "aws-auth" already exists')
                st.rv += 1
                obj["metadata"]["resourceVersion"] = str(st.rv)
                st.cm, st.writes = obj, st.writes + 1
                return self.send_json(201, obj)
        return self.status(404, "NotFound", "no such path")


class EksEntries:
    """The access entries of the fake EKS, as EKS keeps them: one per cluster
    and principal, each with its ARN, type and tags. `pause_delete`, when
    set, is waited on before an entry is deleted (to hold a Delete between
    reading the tags and deleting the entry)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.entries, self.calls, self.pause_delete = {}, [], None

    def seed(self, cluster, arn, kind="EC2_LINUX", tags=None):
        with self.lock:
            self.entries[(cluster, arn)] = {
                "clusterName": cluster, "principalArn": arn, "type": kind, "tags": dict(tags or {}),
                "accessEntryArn": "arn:aws:eks:us-east-1:%s:access-entry/%s/role/%s/%s" % (
                    ACCOUNT, cluster, arn.rsplit("/", 1)[-1], uuid.uuid4())}

    def get(self, cluster, arn):
        with self.lock:
            entry = self.entries.get((cluster, arn))
            return json.loads(json.dumps(entry)) if entry else None

    def handle(self, method, path, query, body):
        """(status, document) for an access-entry or tags call of EKS's REST API."""
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        with self.lock:
            self.calls.append((method, "/".join(parts)))
            by_arn = {e["accessEntryArn"]: e for e in self.entries.values()}
            if parts[0] == "tags" and len(parts) == 2:
                entry = by_arn.get(parts[1])
                if entry is None:
                    return 404, {"message": "resource not found"}
                if method == "POST":
                    if len(set(entry["tags"]) | set(body["tags"])) > 50:  # EKS's TagMap: at most 50
                        return 400, {"message": "Too many tags."}
                    entry["tags"].update(body["tags"])
                elif method == "DELETE":
                    for key in urllib.parse.parse_qs(query).get("tagKeys", []):
                        entry["tags"].pop(key, None)
                return 200, {}
            if len(parts) == 3 and method == "POST":
                key = (parts[1], body["principalArn"])
                if key in self.entries:
                    return 409, {"message": "The specified access entry resource is already in use on this cluster."}
            elif len(parts) == 4:
                key = (parts[1], parts[3])
                if key not in self.entries:
                    return 404, {"message": "The specified principalArn could not be found."}
            else:
                return 404, {"message": "no such path"}
        if method == "POST":
            self.seed(key[0], key[1], body["type"], body.get("tags"))
            return 200, {"accessEntry": self.get(*key)}
        if method == "GET":
            return 200, {"accessEntry": self.get(*key)}
        if self.pause_delete is not None:
            self.pause_delete.wait(30)
        with self.lock:
            self.entries.pop(key, None)
        return 200, {}


class EksHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.answer("GET")

    def do_POST(self):
        self.answer("POST")

    def do_DELETE(self):
        self.answer("DELETE")

    def answer(self, method):
        srv = self.server
        auth = self.headers.get("Authorization", "")
        path, _, query = self.path.partition("?")
        name = path.rsplit("/", 1)[-1]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        ok = (auth.startswith("AWS4-HMAC-SHA256 Credential=%s/" % ACCESS_KEY) and "/us-east-1/eks/" in auth
              and self.headers.get("X-Amz-Date") and self.headers.get("X-Amz-Security-Token") == SESSION_TOKEN)
        fault = srv.fault(operation(method, path))
        error_type = None
        if isinstance(fault, float):  # held this long, then answered
            time.sleep(fault)
            fault = None
        if not ok:
            code, doc = 403, {"message": "bad signature"}
        elif isinstance(fault, int):
            error_type = {429: "ThrottlingException", 500: "ServerException",
                          503: "ServiceUnavailableException"}.get(fault, "BadRequestException")
            code, doc = fault, {"message": "injected %s" % error_type}
        elif isinstance(fault, tuple):  # (status, error type, message)
            code, error_type, doc = fault[0], fault[1], {"message": fault[2]}
        elif path.startswith("/tags/") or "/access-entries" in path:
            code, doc = srv.access.handle(method, path, query, json.loads(body) if body else None)
        elif method != "GET" or not path.startswith("/clusters/") or name not in srv.clusters:
            code, doc = 404, {"message": "No cluster found for name: %s." % name}
        elif srv.clusters[name] is None:  # a cluster whose answer has no endpoint and no CA
            code, doc = 200, {"cluster": {"name": name, "status": "CREATING"}}
        else:
            code, doc = 200, {"cluster": {"name": name, "endpoint": srv.endpoint, "status": "ACTIVE",
                                          "certificateAuthority": {"data": srv.clusters[name]}}}
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        if error_type:
            self.send_header("x-amzn-ErrorType", error_type + ":http://internal.amazon.com/coral/")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def operation(method, path):
    """The EKS operation a REST call is."""
    if path.startswith("/tags/"):
        return {"POST": "TagResource", "DELETE": "UntagResource"}.get(method, "ListTagsForResource")
    if "/access-entries" in path:
        if path.endswith("/access-entries"):
            return "CreateAccessEntry"
        return {"GET": "DescribeAccessEntry", "DELETE": "DeleteAccessEntry"}.get(method, "UpdateAccessEntry")
    return "DescribeCluster"


class FaultyServer(QuietServer):
    """A server answering injected faults first: faults[operation] is an
    iterator of what the next calls get (an HTTP status, (status, error
    type, message), or a float: seconds to hold the call before answering)."""

    def fault(self, op):
        with self.fault_lock:
            return next(self.faults.get(op, iter(())), None)


class CfnHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.responses.setdefault(urllib.parse.urlsplit(self.path).path, []).append(
                {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": json.loads(body)})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def start(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def ca_data(name):
    return base64.b64encode((FIXTURES / name).read_bytes()).decode()


KUBE = EKS = CFN = None
SAVED_ENV = {}
ENV = {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
       "AWS_SESSION_TOKEN": SESSION_TOKEN}


# Nothing listens on port 1 of loopback: a call there is refused at once.
UNREACHABLE = "http://127.0.0.1:1"


def eks_url():
    return "http://127.0.0.1:%d" % EKS.server_address[1]


def setUpModule():
    global KUBE, EKS, CFN
    import ssl
    KUBE = QuietServer(("127.0.0.1", 0), KubeHandler)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(FIXTURES / "server.pem", FIXTURES / "server.key")
    KUBE.socket = tls.wrap_socket(KUBE.socket, server_side=True)
    KUBE.state = KubeState()
    start(KUBE)
    EKS = FaultyServer(("127.0.0.1", 0), EksHandler)
    EKS.faults, EKS.fault_lock = {}, threading.Lock()
    EKS.endpoint = "https://127.0.0.1:%d" % KUBE.server_address[1]
    EKS.clusters = {"demo": ca_data("ca.pem"), "other": ca_data("ca.pem"),
                    "wrong-ca": ca_data("other-ca.pem"), "bare": None}
    EKS.access = EksEntries()
    start(EKS)
    CFN = QuietServer(("127.0.0.1", 0), CfnHandler)
    CFN.lock, CFN.responses = threading.Lock(), {}
    start(CFN)
    env = dict(ENV, AWS_ENDPOINT_URL_EKS=eks_url())
    for key in list(env) + ["AWS_DEFAULT_REGION", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                            "AWS_ENDPOINT_URL", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"]:
        SAVED_ENV[key] = os.environ.pop(key, None)
    os.environ.update(env)


def tearDownModule():
    for server in (KUBE, EKS, CFN):
        server.shutdown()
        server.server_close()
    for key, value in SAVED_ENV.items():
        os.environ.pop(key, None)
        if value is not None:
            os.environ[key] = value


class Context:
    """A stand-in for the Lambda context object."""

    def __init__(self, seconds=60.0):
        self.end = time.monotonic() + seconds
        self.log_stream_name = "2026/01/01/[$LATEST]test"

    def get_remaining_time_in_millis(self):
        return int((self.end - time.monotonic()) * 1000)


class FakeClock:
    """The provider's time module: monotonic runs with real time, and sleep
    only moves it on, so that backing off costs no real time."""

    def __init__(self):
        self.offset, self.slept = 0.0, []

    def monotonic(self):
        return time.monotonic() + self.offset

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.offset += seconds


def stack_id(name="nodes"):
    return "arn:aws:cloudformation:us-east-1:%s:stack/%s/1" % (ACCOUNT, name)


def owner(stack="nodes"):
    """The owner a stack's Custom::AwsAuth is recorded as."""
    return stack_id(stack) + "#NodesAwsAuth"


def event(kind, arn, groups=None, username=USERNAME, cluster="demo", old=None, pid=None, stack="nodes"):
    rid = str(uuid.uuid4())
    ev = {"RequestType": kind, "RequestId": rid, "ResponseURL": "http://127.0.0.1:%d/cfn/%s?X-Amz-Signature=secretsig"
          % (CFN.server_address[1], rid),
          "StackId": stack_id(stack),
          "LogicalResourceId": "NodesAwsAuth", "ResourceType": "Custom::AwsAuth",
          "ResourceProperties": {"ServiceToken": "arn:aws:lambda:us-east-1:%s:function:aws-auth" % ACCOUNT,
                                 "ClusterName": cluster, "RoleArn": arn, "Username": username,
                                 "Groups": list(NODE_GROUPS if groups is None else groups)}}
    if old is not None:
        ev["OldResourceProperties"] = old
    if pid is not None:
        ev["PhysicalResourceId"] = pid
    return ev


def responses(ev):
    with CFN.lock:
        return list(CFN.responses.get(urllib.parse.urlsplit(ev["ResponseURL"]).path, []))


def entry(arn, groups=None):
    return {"rolearn": provider.strip_path(arn), "username": USERNAME, "groups": list(groups or NODE_GROUPS)}


class ProviderCase(unittest.TestCase):
    """A test with the fake servers, its output captured."""

    def setUp(self):
        KUBE.state.reset()
        EKS.faults.clear()
        self.out = io.StringIO()
        self.redirect = contextlib.redirect_stdout(self.out)
        self.redirect.__enter__()

    def tearDown(self):
        self.redirect.__exit__(None, None, None)

    module = provider  # the provider under test

    def fake_clock(self):
        clock = FakeClock()
        patcher = mock.patch.object(type(self).module, "time", clock)
        patcher.start()
        self.addCleanup(patcher.stop)
        return clock

    def invoke(self, ev, seconds=60.0):
        type(self).module.handler(ev, Context(seconds))
        got = responses(ev)
        self.assertEqual(len(got), 1, "exactly one answer to CloudFormation")
        return got[0]["body"]

    def assertSuccess(self, ev, seconds=60.0):
        body = self.invoke(ev, seconds)
        self.assertEqual(body["Status"], "SUCCESS", body["Reason"])
        return body

    def assertFailed(self, ev, reason_part, seconds=60.0):
        body = self.invoke(ev, seconds)
        self.assertEqual(body["Status"], "FAILED")
        self.assertIn(reason_part, body["Reason"])
        return body

    def seed_foreign(self, map_roles=FOREIGN_MAP_ROLES, owners=None):
        KUBE.state.seed(dict(FOREIGN_OTHER, mapRoles=map_roles, mapUsers=FOREIGN_MAP_USERS), owners)

    def assertForeignIntact(self, data):
        self.assertEqual(data["mapUsers"], FOREIGN_MAP_USERS)
        for key, value in FOREIGN_OTHER.items():
            self.assertEqual(data[key], value)
        got = entries(data["mapRoles"])
        for foreign in entries(FOREIGN_MAP_ROLES):
            self.assertEqual(got.count(foreign), 1, foreign)
        with KUBE.state.lock:
            meta = KUBE.state.cm["metadata"]
        self.assertEqual(meta["labels"], {"team": "platform"})
        self.assertEqual(dict(meta["annotations"], **{OWNERS: None}), {"note": "do not lose me", OWNERS: None})


class ProviderTest(ProviderCase):
    # ---------------------------------------------------------------- create

    def test_create_on_empty_cluster_posts_the_configmap(self):
        ev = event("Create", role("nodes"))
        body = self.assertSuccess(ev)
        self.assertEqual(body["PhysicalResourceId"], "aws-auth/demo/" + role("nodes"))
        for key in ("StackId", "RequestId", "LogicalResourceId"):
            self.assertEqual(body[key], ev[key])
        self.assertIs(body["NoEcho"], False)
        self.assertEqual(body["Data"], {})
        self.assertEqual(responses(ev)[0]["headers"].get("content-type"), "")
        self.assertIn(("POST", CM_COLLECTION), KUBE.state.requests)
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), [entry(role("nodes"))])

    def test_create_beside_foreign_entries_appends_without_touching_them(self):
        self.seed_foreign()
        self.assertSuccess(event("Create", role("nodes")))
        data = KUBE.state.data()
        self.assertForeignIntact(data)
        # textual append: every byte someone else wrote is still there, in order
        self.assertTrue(data["mapRoles"].startswith(FOREIGN_MAP_ROLES), data["mapRoles"])
        self.assertEqual(entries(data["mapRoles"]), entries(FOREIGN_MAP_ROLES) + [entry(role("nodes"))])

    def test_create_beside_a_json_flow_list_keeps_every_value(self):
        cdk = ('[{"rolearn":"arn:aws:iam::111122223333:role/cdk-admin","username":"cdk:admin",'
               '"groups":["system:masters"],"weight":1,"enabled":true,"note":"yes"}]')
        KUBE.state.seed({"mapRoles": cdk})
        self.assertSuccess(event("Create", role("nodes")))
        text = KUBE.state.data()["mapRoles"]
        self.assertEqual(entries(text), entries(cdk) + [entry(role("nodes"))])
        self.assertIn('note: "yes"', text)  # still a string, not a YAML 1.1 boolean
        self.assertIn("weight: 1", text)  # still a number

    def test_create_is_idempotent(self):
        self.seed_foreign()
        self.assertSuccess(event("Create", role("nodes")))
        writes, text = KUBE.state.writes, KUBE.state.data()["mapRoles"]
        self.assertSuccess(event("Create", role("nodes")))
        self.assertSuccess(event("Create", role("nodes", "/with/path/"), list(reversed(NODE_GROUPS))))
        self.assertEqual(KUBE.state.writes, writes, "no write when the entry is already there")
        self.assertEqual(KUBE.state.data()["mapRoles"], text)

    def test_create_refuses_a_conflicting_mapping_of_the_same_role(self):
        self.seed_foreign()
        body = self.assertFailed(event("Create", role("Admin")), "already mapped")
        self.assertTrue(body["PhysicalResourceId"])
        self.assertEqual(KUBE.state.writes, 0)

    def test_role_path_is_stripped(self):
        arn = role("nodes", "/teams/blue/")
        body = self.assertSuccess(event("Create", arn))
        self.assertEqual(body["PhysicalResourceId"], "aws-auth/demo/" + role("nodes"))
        self.assertEqual(entries(KUBE.state.data()["mapRoles"])[0]["rolearn"], role("nodes"))
        self.assertEqual(provider.strip_path("arn:aws:iam::123456789012:role/some/path/name"),
                         "arn:aws:iam::123456789012:role/name")
        self.assertEqual(provider.strip_path("arn:aws-cn:iam::123456789012:role/name"),
                         "arn:aws-cn:iam::123456789012:role/name")
        self.assertSuccess(event("Delete", arn, pid=body["PhysicalResourceId"]))
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), [])

    def test_windows_group_is_allowed(self):
        groups = NODE_GROUPS + ["eks:kube-proxy-windows"]
        self.assertSuccess(event("Create", role("win"), groups))
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), [entry(role("win"), groups)])

    # ---------------------------------------------------------------- update

    def test_update_replaces_only_its_own_entry(self):
        self.seed_foreign()
        created = self.assertSuccess(event("Create", role("old")))
        old_props = event("Create", role("old"))["ResourceProperties"]
        body = self.assertSuccess(event("Update", role("new"), old=old_props, pid=created["PhysicalResourceId"]))
        self.assertEqual(body["PhysicalResourceId"], created["PhysicalResourceId"])
        data = KUBE.state.data()
        self.assertForeignIntact(data)
        self.assertEqual(entries(data["mapRoles"]), entries(FOREIGN_MAP_ROLES) + [entry(role("new"))])
        self.assertTrue(data["mapRoles"].startswith(FOREIGN_MAP_ROLES))

    def test_update_of_groups_for_the_same_role(self):
        self.seed_foreign()
        created = self.assertSuccess(event("Create", role("n")))
        groups = NODE_GROUPS + ["eks:kube-proxy-windows"]
        old_props = event("Create", role("n"))["ResourceProperties"]
        self.assertSuccess(event("Update", role("n"), groups, old=old_props, pid=created["PhysicalResourceId"]))
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), entries(FOREIGN_MAP_ROLES) + [entry(role("n"), groups)])

    def test_update_to_another_cluster_returns_a_new_id(self):
        created = self.assertSuccess(event("Create", role("n")))
        old_props = event("Create", role("n"))["ResourceProperties"]
        body = self.assertSuccess(event("Update", role("n"), cluster="other", old=old_props,
                                        pid=created["PhysicalResourceId"]))
        self.assertEqual(body["PhysicalResourceId"], "aws-auth/other/" + role("n"))

    def test_refused_update_keeps_the_old_entry(self):
        created = self.assertSuccess(event("Create", role("n")))
        old_props = event("Create", role("n"))["ResourceProperties"]
        writes = KUBE.state.writes
        body = self.assertFailed(event("Update", role("n"), NODE_GROUPS + ["system:masters"], old=old_props,
                                       pid=created["PhysicalResourceId"]), "system:masters")
        self.assertEqual(body["PhysicalResourceId"], created["PhysicalResourceId"])
        self.assertEqual(KUBE.state.writes, writes)
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), [entry(role("n"))])

    # ---------------------------------------------------------------- delete

    def test_delete_removes_only_its_own_entry(self):
        ours = "- rolearn: %s\n  username: %s\n  groups:\n  - system:bootstrappers\n  - system:nodes\n" % (
            role("nodes"), USERNAME)
        self.seed_foreign(FOREIGN_MAP_ROLES + ours, {role("nodes"): [owner()]})
        self.assertSuccess(event("Delete", role("nodes"), pid="aws-auth/demo/" + role("nodes")))
        self.assertIsNone(KUBE.state.owners(), "the last owner's record goes with it")
        data = KUBE.state.data()
        self.assertEqual(data["mapRoles"], FOREIGN_MAP_ROLES)  # byte for byte
        self.assertForeignIntact(data)

    def test_delete_of_an_entry_in_the_middle(self):
        ours = "- rolearn: %s\n  username: %s\n  groups: ['system:bootstrappers', \"system:nodes\"]\n" % (
            role("nodes"), USERNAME)
        first, rest = FOREIGN_MAP_ROLES.split("- rolearn: \"arn", 1)
        self.seed_foreign(first + ours + "- rolearn: \"arn" + rest, {role("nodes"): [owner()]})
        self.assertSuccess(event("Delete", role("nodes"), pid="x"))
        self.assertEqual(KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)

    def test_delete_when_the_entry_is_already_gone(self):
        self.seed_foreign()
        self.assertSuccess(event("Delete", role("nodes"), pid="aws-auth/demo/" + role("nodes")))
        self.assertEqual(KUBE.state.writes, 0)
        self.assertEqual(KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)

    def test_delete_when_the_configmap_is_gone(self):
        self.assertSuccess(event("Delete", role("nodes"), pid="aws-auth/demo/" + role("nodes")))
        self.assertEqual(KUBE.state.writes, 0)
        self.assertIsNone(KUBE.state.data())

    def test_delete_when_the_cluster_is_gone(self):
        self.assertSuccess(event("Delete", role("nodes"), cluster="deleted", pid="aws-auth/deleted/x"))
        self.assertEqual(KUBE.state.requests, [])

    def test_delete_leaves_a_foreign_mapping_of_the_same_role(self):
        self.seed_foreign()
        self.assertSuccess(event("Delete", role("Admin"), pid="x"))
        self.assertEqual(KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)

    # ------------------------------------------------------------ refusals

    def test_refused_group_writes_nothing(self):
        self.seed_foreign()
        ev = event("Create", role("nodes"), NODE_GROUPS + ["system:masters"])
        body = self.assertFailed(ev, "system:masters")
        self.assertEqual(KUBE.state.requests, [])
        self.assertEqual(KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)
        # CloudFormation's rollback Deletes the failed resource: a no-op
        self.assertSuccess(event("Delete", role("nodes"), NODE_GROUPS + ["system:masters"],
                                 pid=body["PhysicalResourceId"]))
        self.assertSuccess(event("Delete", role("Admin"), ["system:masters"], username="admin:{{SessionName}}",
                                 pid=body["PhysicalResourceId"]))
        self.assertEqual(KUBE.state.requests, [])
        self.assertEqual(KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)

    def test_refused_username_writes_nothing(self):
        self.assertFailed(event("Create", role("nodes"), username="admin"), "Username")
        self.assertFailed(event("Create", role("nodes"), username="system:node:{{EC2InstanceId}}"), "Username")
        self.assertEqual(KUBE.state.requests, [])

    def test_nodes_named_by_instance_id_are_mapped_by_session_name(self):
        # nodeadm's InstanceIdNodeName: kubelet authenticates as
        # system:node:<instance ID>, the session name of the node's role.
        self.seed_foreign()
        self.assertSuccess(event("Create", role("nodes"), username="system:node:{{SessionName}}"))
        ours = [e for e in entries(KUBE.state.data()["mapRoles"]) if e["rolearn"] == provider.strip_path(role("nodes"))]
        self.assertEqual([e["username"] for e in ours], ["system:node:{{SessionName}}"])

    def test_refused_malformed_properties(self):
        self.assertFailed(event("Create", role("nodes"), ["system:nodes"]), "system:bootstrappers")
        self.assertFailed(event("Create", "arn:aws:iam::111122223333:user/bob"), "RoleArn")
        self.assertFailed(event("Create", role("nodes"), cluster="../etc"), "ClusterName")
        ev = event("Create", role("nodes"))
        ev["ResourceProperties"]["Groups"] = "system:bootstrappers,system:nodes"
        self.assertFailed(ev, "Groups")
        self.assertEqual(KUBE.state.requests, [])

    def test_unreadable_map_roles_fails_without_writing(self):
        text = "- rolearn: !!binary eA==\n  username: x\n"
        KUBE.state.seed({"mapRoles": text})
        self.assertFailed(event("Create", role("nodes")), "cannot read with certainty")
        self.assertEqual(KUBE.state.writes, 0)
        self.assertEqual(KUBE.state.data()["mapRoles"], text)

    # -------------------------------------------------------------- failures

    def test_api_5xx_and_429_are_retried(self):
        self.fake_clock()
        self.seed_foreign()
        KUBE.state.fail["GET"] = [500, 429]
        KUBE.state.fail["PUT"] = [503]
        self.assertSuccess(event("Create", role("nodes")))
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), entries(FOREIGN_MAP_ROLES) + [entry(role("nodes"))])

    def test_api_500_on_read_fails_with_reason_once_retries_give_up(self):
        self.fake_clock()
        KUBE.state.fail["GET"] = [500] * provider.RETRY_ATTEMPTS
        self.assertFailed(event("Create", role("nodes")), "after 8 attempts, HTTP 500")
        self.assertEqual(KUBE.state.writes, 0)
        self.assertEqual(self.out.getvalue().count("(transient), attempt "), provider.RETRY_ATTEMPTS - 1)

    def test_api_500_on_write_fails_with_reason_once_retries_give_up(self):
        self.fake_clock()
        self.seed_foreign()
        KUBE.state.fail["PUT"] = [500] * provider.RETRY_ATTEMPTS
        self.assertFailed(event("Create", role("nodes")), "injected failure 500")
        self.assertEqual(KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)

    def test_an_api_error_that_is_not_transient_is_not_retried(self):
        KUBE.state.fail["GET"] = [422]
        self.assertFailed(event("Create", role("nodes")), "HTTP 422")
        self.assertEqual(len(KUBE.state.requests), 1)

    def test_unknown_cluster_fails_on_create(self):
        self.assertFailed(event("Create", role("nodes"), cluster="nope"), "not found")

    def test_wrong_cluster_ca_fails_tls(self):
        self.assertFailed(event("Create", role("nodes"), cluster="wrong-ca"), "CERTIFICATE_VERIFY_FAILED")
        self.assertEqual(KUBE.state.requests, [])

    # ------------------------------------------------ the SDKs' endpoint settings

    def test_the_global_endpoint_setting_reaches_eks_without_the_eks_one(self):
        with mock.patch.dict(os.environ, {"AWS_ENDPOINT_URL": eks_url()}):
            del os.environ["AWS_ENDPOINT_URL_EKS"]
            self.assertSuccess(event("Create", role("nodes")))

    def test_the_eks_endpoint_setting_wins_over_the_global_one(self):
        with mock.patch.dict(os.environ, {"AWS_ENDPOINT_URL": UNREACHABLE}):
            self.assertSuccess(event("Create", role("nodes")))

    def test_the_global_endpoint_setting_alone_is_used(self):
        with mock.patch.dict(os.environ, {"AWS_ENDPOINT_URL": UNREACHABLE}):
            del os.environ["AWS_ENDPOINT_URL_EKS"]
            self.assertFailed(event("Create", role("nodes")), "Connection refused")
        self.assertEqual(KUBE.state.requests, [])

    def test_unexpected_exception_still_answers(self):
        with mock.patch.object(provider, "edit_map_roles", side_effect=RuntimeError("boom")):
            self.assertFailed(event("Create", role("nodes")), "RuntimeError: boom")
        ev = event("Create", role("nodes"))
        del ev["RequestType"]
        self.assertFailed(ev, "KeyError")

    def test_conflicts_are_retried(self):
        self.seed_foreign()
        KUBE.state.conflict_every = 1  # the next PUTs all conflict...
        timer = threading.Timer(0.3, lambda: setattr(KUBE.state, "conflict_every", 0))  # ...for a while
        timer.start()
        self.assertSuccess(event("Create", role("nodes")))
        timer.join()
        self.assertGreater(KUBE.state.forced, 0)
        self.assertEqual(entries(KUBE.state.data()["mapRoles"]), entries(FOREIGN_MAP_ROLES) + [entry(role("nodes"))])

    def test_watchdog_answers_before_the_deadline(self):
        self.seed_foreign()
        KUBE.state.delay = 4.0
        ev = event("Create", role("nodes"))
        started = time.monotonic()
        body = self.invoke(ev, seconds=1.6)
        elapsed = time.monotonic() - started
        self.assertEqual(body["Status"], "FAILED")
        self.assertIn("timed out", body["Reason"])
        self.assertEqual(body["PhysicalResourceId"], "aws-auth/demo/" + role("nodes"))
        self.assertLess(elapsed, 2.5)
        time.sleep(0.3)
        self.assertEqual(len(responses(ev)), 1, "answered exactly once")
        self.assertEqual(KUBE.state.writes, 0)
        KUBE.state.delay = 0.0

    def test_token_sent_to_the_api_server(self):
        self.assertSuccess(event("Create", role("nodes")))
        token = KUBE.state.tokens[0]
        url = base64.urlsafe_b64decode(token[len("k8s-aws-v1."):] + "=" * (-len(token) % 4)).decode()
        parts = urllib.parse.urlsplit(url)
        query = dict(urllib.parse.parse_qsl(parts.query))
        self.assertEqual((parts.scheme, parts.netloc), ("https", "sts.us-east-1.amazonaws.com"))
        self.assertEqual(query["Action"], "GetCallerIdentity")
        self.assertEqual(query["X-Amz-SignedHeaders"], "host;x-k8s-aws-id")
        self.assertEqual(query["X-Amz-Expires"], "60")
        self.assertEqual(query["X-Amz-Security-Token"], SESSION_TOKEN)

    def test_logs_hold_no_secrets(self):
        ev = event("Create", role("nodes"))
        self.assertSuccess(ev)
        logs = self.out.getvalue()
        self.assertIn("Create", logs)
        for secret in (SECRET_KEY, SESSION_TOKEN, "k8s-aws-v1.", "secretsig", "Signature="):
            self.assertNotIn(secret, logs)

    # ----------------------------------------------------------- concurrency

    def test_50_concurrent_creates_and_deletes_lose_nothing(self):
        self.seed_foreign()
        KUBE.state.conflict_every = 4  # on top of the real conflicts
        n = 50
        invocations, errors = [], []
        lock = threading.Lock()

        def worker(k):
            try:
                for ev in [event("Create", role("node-%02d" % k))] + (
                        [event("Delete", role("node-%02d" % k), pid="aws-auth/demo/" + role("node-%02d" % k))]
                        if k % 2 == 0 else []):
                    with lock:
                        invocations.append(ev)
                    provider.handler(ev, Context(60))
            except Exception as err:  # noqa: BLE001
                errors.append(err)

        started = time.monotonic()
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(55)
        elapsed = time.monotonic() - started
        self.assertEqual(errors, [])
        self.assertEqual(len(invocations), n + n // 2)
        for ev in invocations:
            got = responses(ev)
            self.assertEqual(len(got), 1, "every invocation answered exactly once")
            self.assertEqual(got[0]["body"]["Status"], "SUCCESS", got[0]["body"]["Reason"])
        data = KUBE.state.data()
        self.assertForeignIntact(data)
        got = entries(data["mapRoles"])
        self.assertTrue(data["mapRoles"].startswith(FOREIGN_MAP_ROLES))
        survivors = [entry(role("node-%02d" % k)) for k in range(n) if k % 2]
        for e in survivors:
            self.assertEqual(got.count(e), 1, e)
        self.assertEqual(len(got), len(entries(FOREIGN_MAP_ROLES)) + len(survivors))
        self.assertGreater(KUBE.state.forced, 0)
        sys.__stderr__.write("[50 concurrent: %.1f s, %d writes, %d forced conflicts] " % (
            elapsed, KUBE.state.writes, KUBE.state.forced))


# ---------------------------------------------------------------- signing ---

SUITE_CREDS = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None)
SUITE_TIME = datetime.datetime(2015, 8, 30, 12, 36, 0, tzinfo=datetime.timezone.utc)


def uri_encode(text):
    """RFC 3986 percent-encoding as SigV4 asks: everything but A-Z a-z 0-9 - _ . ~"""
    safe = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~"
    return "".join(chr(b) if b in safe else "%%%02X" % b for b in text.encode())


def expected_eks_token(cluster, region, ak, sk, token, when):
    """The EKS token computed by following the SigV4 spec step by step."""
    amz_date, day = when.strftime("%Y%m%dT%H%M%SZ"), when.strftime("%Y%m%d")
    host = "sts.%s.amazonaws.com" % region
    scope = "/".join([day, region, "sts", "aws4_request"])
    params = [("Action", "GetCallerIdentity"), ("Version", "2011-06-15"),
              ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", ak + "/" + scope),
              ("X-Amz-Date", amz_date), ("X-Amz-Expires", "60"),
              ("X-Amz-SignedHeaders", "host;x-k8s-aws-id"), ("X-Amz-Security-Token", token)]
    # Task 1: the canonical request
    canonical_query = "&".join(sorted(uri_encode(k) + "=" + uri_encode(v) for k, v in params))
    canonical_request = "GET\n/\n%s\nhost:%s\nx-k8s-aws-id:%s\n\nhost;x-k8s-aws-id\n%s" % (
        canonical_query, host, cluster, hashlib.sha256(b"").hexdigest())
    # Task 2: the string to sign
    string_to_sign = "AWS4-HMAC-SHA256\n%s\n%s\n%s" % (
        amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest())
    # Task 3: the signing key and the signature
    k_date = hmac.new(("AWS4" + sk).encode(), day.encode(), hashlib.sha256).digest()
    k_region = hmac.new(k_date, region.encode(), hashlib.sha256).digest()
    k_service = hmac.new(k_region, b"sts", hashlib.sha256).digest()
    k_signing = hmac.new(k_service, b"aws4_request", hashlib.sha256).digest()
    signature = hmac.new(k_signing, string_to_sign.encode(), hashlib.sha256).hexdigest()
    url = "https://%s/?%s&X-Amz-Signature=%s" % (host, canonical_query, signature)
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


class SigningTest(unittest.TestCase):
    def authorization(self, url):
        _, headers = provider.sigv4("GET", url, SUITE_CREDS, "us-east-1", "service", SUITE_TIME)
        return headers["authorization"]

    def test_aws_sigv4_suite_get_vanilla(self):
        self.assertEqual(self.authorization("https://example.amazonaws.com/"),
                         "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                         "SignedHeaders=host;x-amz-date, "
                         "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")

    def test_aws_sigv4_suite_get_vanilla_query_order_key_case(self):
        self.assertTrue(self.authorization("https://example.amazonaws.com/?Param2=value2&Param1=value1").endswith(
            "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"))

    def test_aws_sigv4_suite_get_vanilla_query_order_value(self):
        self.assertTrue(self.authorization("https://example.amazonaws.com/?Param1=value2&Param1=value1").endswith(
            "Signature=5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694"))

    def test_aws_sigv4_suite_get_unreserved(self):
        path = "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        self.assertTrue(self.authorization("https://example.amazonaws.com" + path).endswith(
            "Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"))

    def test_aws_s3_documentation_presigned_url(self):
        url = provider.sigv4("GET", "https://examplebucket.s3.amazonaws.com/test.txt",
                             ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None),
                             "us-east-1", "s3", datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc),
                             expires=86400, payload_hash="UNSIGNED-PAYLOAD")
        self.assertEqual(url, "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                              "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                              "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                              "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")

    def test_session_token_is_signed_in_header_mode(self):
        _, headers = provider.sigv4("GET", "https://eks.us-east-1.amazonaws.com/clusters/demo",
                                    ("AK", "SK", "TOKEN"), "us-east-1", "eks", SUITE_TIME)
        self.assertEqual(headers["x-amz-security-token"], "TOKEN")
        self.assertIn("SignedHeaders=host;x-amz-date;x-amz-security-token,", headers["authorization"])

    def test_eks_token_known_vector(self):
        when = datetime.datetime(2024, 2, 29, 23, 59, 30, tzinfo=datetime.timezone.utc)
        creds = ("ASIAEXAMPLEKEYID0001", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "IQoJb3JpZ2luX2Vj/+=token")
        token = provider.eks_token("my-cluster", "eu-west-1", creds, when)
        self.assertEqual(token, expected_eks_token("my-cluster", "eu-west-1", *creds, when))
        # pinned, so that a change of the signer and the test together shows
        self.assertEqual(hashlib.sha256(token.encode()).hexdigest(), PINNED_TOKEN_SHA256)
        self.assertTrue(token.startswith("k8s-aws-v1."))
        self.assertNotIn("=", token)
        self.assertTrue(set(token[len("k8s-aws-v1."):]) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"))
        encoded = token[len("k8s-aws-v1."):]
        url = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
        parts = urllib.parse.urlsplit(url)
        query = dict(urllib.parse.parse_qsl(parts.query))
        self.assertEqual(parts.scheme, "https")
        self.assertEqual(parts.netloc, "sts.eu-west-1.amazonaws.com")
        self.assertIn("x-k8s-aws-id", query["X-Amz-SignedHeaders"].split(";"))
        self.assertEqual(query["X-Amz-Date"], "20240229T235930Z")
        self.assertEqual(query["X-Amz-Credential"], "ASIAEXAMPLEKEYID0001/20240229/eu-west-1/sts/aws4_request")
        self.assertEqual(query["X-Amz-Security-Token"], creds[2])
        self.assertEqual(len(query["X-Amz-Signature"]), 64)

    def test_china_regions_use_their_domain(self):
        token = provider.eks_token("c", "cn-north-1", ("AK", "SK", None), SUITE_TIME)
        encoded = token[len("k8s-aws-v1."):]
        url = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
        self.assertTrue(url.startswith("https://sts.cn-north-1.amazonaws.com.cn/?"))
        self.assertNotIn("X-Amz-Security-Token", url)


class EndpointTest(unittest.TestCase):
    """The EKS endpoint, from the settings every AWS SDK reads."""

    def endpoint(self, region="us-east-1", **env):
        names = ("AWS_ENDPOINT_URL_EKS", "AWS_ENDPOINT_URL", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
        with mock.patch.dict(os.environ, env):
            for name in set(names) - set(env):
                os.environ.pop(name, None)
            return provider.eks_endpoint(region)

    def test_without_settings_the_regional_endpoint(self):
        self.assertEqual(self.endpoint(), "https://eks.us-east-1.amazonaws.com")
        self.assertEqual(self.endpoint("cn-northwest-1"), "https://eks.cn-northwest-1.amazonaws.com.cn")

    def test_the_service_specific_setting_overrides_the_global_one(self):
        got = self.endpoint(AWS_ENDPOINT_URL_EKS="https://eks.example/", AWS_ENDPOINT_URL="https://all.example")
        self.assertEqual(got, "https://eks.example")

    def test_the_global_setting_applies_when_the_service_one_is_unset_or_empty(self):
        self.assertEqual(self.endpoint(AWS_ENDPOINT_URL="https://all.example/base"), "https://all.example/base")
        got = self.endpoint(AWS_ENDPOINT_URL_EKS="", AWS_ENDPOINT_URL="https://all.example")
        self.assertEqual(got, "https://all.example")

    def test_ignore_configured_endpoint_urls_restores_the_regional_endpoint(self):
        for value in ("true", "TRUE"):
            got = self.endpoint(AWS_ENDPOINT_URL_EKS="https://eks.example", AWS_ENDPOINT_URL="https://all.example",
                                AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=value)
            self.assertEqual(got, "https://eks.us-east-1.amazonaws.com")
        got = self.endpoint(AWS_ENDPOINT_URL_EKS="https://eks.example", AWS_IGNORE_CONFIGURED_ENDPOINT_URLS="false")
        self.assertEqual(got, "https://eks.example")

    def test_a_variable_of_its_own_is_not_read(self):
        self.assertEqual(self.endpoint(EKSYNTH_EKS_ENDPOINT="https://mine.example"),
                         "https://eks.us-east-1.amazonaws.com")


PINNED_TOKEN_SHA256 = "1db29339cd670586bb1156f5eb5ad0f681431c3d926fb326b9a85d42d75c0fd0"


# ----------------------------------------------------------------- source ---

class SourceTest(unittest.TestCase):
    def test_provider_is_small_self_contained_standard_library_code(self):
        # Inline code may be 4 MB zipped; what binds is the template around
        # it (blueprints/aws-auth/README.md, "Constraints on the source").
        for part, budget in (("aws_auth.py", 46 * 1024), ("access_entries.py", 27 * 1024)):
            with self.subTest(part=part):
                code = source(part)
                self.assertLess(len(code), budget)
                code.decode("ascii")  # no surprises when embedded in a template
                self.assertNotIn(b"${", code)  # safe inside Fn::Sub too
                self.assertNotIn(b"\t", code)
                imported, defined = set(), set()
                for node in ast.walk(ast.parse(code)):
                    if isinstance(node, ast.Import):
                        imported |= {alias.name.split(".")[0] for alias in node.names}
                    elif isinstance(node, ast.ImportFrom):
                        imported.add(node.module.split(".")[0])
                    elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                        defined.add(node.name)
                self.assertTrue(imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names))
                self.assertFalse(imported & {"boto3", "botocore"})
                # What common.py calls, the part defines.
                self.assertTrue({"run", "handler"} <= defined)


if __name__ == "__main__":
    unittest.main()
