"""eksynth's Custom::AwsAuth provider: maps one node IAM role in an EKS
cluster's kube-system/aws-auth ConfigMap; Delete removes exactly that mapping.
Standard library only.  See blueprints/aws-auth/README.md in eksynth."""
import base64
import collections
import datetime
import hashlib
import hmac
import json
import os
import random
import re
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

USERNAME = "system:node:{{EC2PrivateDNSName}}"
USERNAMES = (USERNAME, "system:node:{{SessionName}}")  # the second: nodes named by instance ID
GROUPS = ("system:bootstrappers", "system:nodes", "eks:kube-proxy-windows")  # the first two required
CM_LIST = "/api/v1/namespaces/kube-system/configmaps"
CM_PATH = CM_LIST + "/aws-auth"
REFUSED_ID = "aws-auth-refused/"  # PhysicalResourceId of a refused Create: its Delete does nothing
NET_TIMEOUT = 10.0  # seconds, the most one network call may take
MAX_ATTEMPTS = 30  # read-modify-write attempts while others write aws-auth too (409)
CLUSTER_RE = re.compile(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")
ROLE_RE = re.compile(r"(arn:aws[a-z-]*:iam::[0-9]{12}:role/)(?:[\x21-\x7e]*/)?([\w+=,.@-]{1,64})", re.A)


class Refused(Exception):
  """Refused before anything was written."""


class Failure(Exception):
  """Failed, for a reason CloudFormation shows."""


def log(msg):  # never given a token, a credential or the ResponseURL
  print("[aws-auth] " + msg, flush=True)


# --- SigV4 ---

def utcnow():
  return datetime.datetime.now(datetime.timezone.utc)


def sigv4(method, url, creds, region, service, now, headers=None, expires=None,
          payload_hash=hashlib.sha256(b"").hexdigest()):
  """AWS Signature Version 4 with creds (key id, secret, session token or
  None): the presigned URL when `expires` (seconds) is given, else (url, headers)."""
  ak, sk, token = creds
  parts = urllib.parse.urlsplit(url)
  amz_date = now.strftime("%Y%m%dT%H%M%SZ")
  scope = "%s/%s/%s/aws4_request" % (amz_date[:8], region, service)
  hdrs = dict({"host": parts.netloc}, **{k.lower(): v for k, v in (headers or {}).items()})
  params = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
  if expires is None:  # signed headers
    hdrs.update([("x-amz-date", amz_date)] + [("x-amz-security-token", token)] * bool(token))
  signed = ";".join(sorted(hdrs))
  if expires is not None:  # a signed query
    params += [("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", ak + "/" + scope),
               ("X-Amz-Date", amz_date), ("X-Amz-Expires", str(expires)),
               ("X-Amz-SignedHeaders", signed)] + [("X-Amz-Security-Token", token)] * bool(token)
  q = lambda s: urllib.parse.quote(s, safe="-_.~")  # noqa: E731
  query = "&".join("%s=%s" % kv for kv in sorted((q(k), q(v)) for k, v in params))
  path = parts.path or "/"
  canonical = "\n".join([method, path, query, "".join(
      "%s:%s\n" % (k, " ".join(hdrs[k].split())) for k in sorted(hdrs)), signed, payload_hash])
  to_sign = "AWS4-HMAC-SHA256\n%s\n%s\n%s" % (amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest())
  key = ("AWS4" + sk).encode()
  for part in (amz_date[:8], region, service, "aws4_request"):
    key = hmac.new(key, part.encode(), hashlib.sha256).digest()
  sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
  url = "%s://%s%s%s" % (parts.scheme, parts.netloc, path, "?" + query if query else "")
  if expires is not None:
    return url + ("&" if query else "?") + "X-Amz-Signature=" + sig
  hdrs["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
      ak, scope, signed, sig)
  return url, hdrs


def domain(region):
  return "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"


def eks_endpoint(region):
  """EKS's endpoint as every AWS SDK reads it: AWS_ENDPOINT_URL_EKS, then
  AWS_ENDPOINT_URL, unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true; else
  the region's public endpoint."""
  env = os.environ.get
  if env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").strip().lower() != "true":
    for name in ("AWS_ENDPOINT_URL_EKS", "AWS_ENDPOINT_URL"):
      if env(name, "").strip():
        return env(name).strip().rstrip("/")
  return "https://eks.%s.%s" % (region, domain(region))


def eks_token(cluster, region, creds, now):
  """EKS's bearer token: a presigned STS GetCallerIdentity URL that signs
  the header x-k8s-aws-id: <cluster>."""
  url = "https://sts.%s.%s/?Action=GetCallerIdentity&Version=2011-06-15" % (region, domain(region))
  url = sigv4("GET", url, creds, region, "sts", now, {"x-k8s-aws-id": cluster}, expires=60)
  return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


# --- HTTP ---

def http(method, url, headers, body=None, ctx=None, timeout=NET_TIMEOUT):
  """One HTTP call: (status, body bytes), whatever the status."""
  if body is not None and not isinstance(body, bytes):
    body = json.dumps(body).encode()
  try:
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
      return resp.status, resp.read()
  except urllib.error.HTTPError as err:
    return err.code, err.read()


def why(status, raw):
  return "HTTP %d: %s" % (status, " ".join(raw.decode("utf-8", "replace").split())[:400])


class Invocation:
  """One request: its deadline, the cluster, and whether CloudFormation has
  had its one answer (from the handler or from the watchdog)."""

  def __init__(self, event, context):
    self.event, self.lock, self.answered, self.physical_id = event, threading.Lock(), False, None
    left = context.get_remaining_time_in_millis() / 1000.0
    self.deadline = time.monotonic() + left
    self.watchdog_delay = max(0.1, left - min(5.0, left / 4))

  def timeout(self):
    """Timeout of the next network call; none starts after the answer."""
    left = self.deadline - time.monotonic()
    if self.answered or left < 0.2:
      raise Failure("out of time")
    return min(NET_TIMEOUT, left)

  def describe(self, name):
    """EKS DescribeCluster: the cluster, or None when there is none."""
    env = os.environ.get
    self.name, self.region, self.minted = name, env("AWS_REGION"), -99.0
    self.creds = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN"))
    if not (all(self.creds[:2]) and self.region):
      raise Failure("no AWS credentials or region in the environment")
    url, hdrs = sigv4("GET", eks_endpoint(self.region) + "/clusters/" + name, self.creds, self.region, "eks", utcnow())
    status, raw = http("GET", url, hdrs, timeout=self.timeout())
    log("eks:DescribeCluster %s -> %d" % (name, status))
    if status == 404:
      return None
    if status != 200:
      raise Failure("EKS DescribeCluster %s failed, %s" % (name, why(status, raw)))
    cluster = json.loads(raw)["cluster"]
    self.api = cluster["endpoint"].rstrip("/")  # trusting only the cluster's CA:
    self.ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificateAuthority"]["data"]).decode())
    return cluster

  def kube(self, method, path, body=None):
    """One call to the cluster's API server."""
    if time.monotonic() - self.minted > 30:  # the token's presigned URL lives 60 s
      self.token, self.minted = eks_token(self.name, self.region, self.creds, utcnow()), time.monotonic()
    hdrs = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
    hdrs.update({"Content-Type": "application/json"} if body else {})
    status, raw = http(method, self.api + path, hdrs, body, self.ctx, self.timeout())
    log("%s %s -> %d" % (method, path, status))
    return status, raw


# --- mapRoles YAML ---
# mapRoles is YAML written by many tools (eksctl, EKS, Terraform, the CDK's
# JSON, people); the standard library reads none.  This reads a strict subset:
# a list (block or flow style) of mappings of scalars and lists of scalars;
# plain, 'single' or "double" quoted scalars; comments.  Anything else (anchors,
# tags, block or multi-line scalars, tabs, documents, duplicate keys, deeper
# nesting) raises YamlError, and nothing is written.

class YamlError(Exception):
  pass


# A plain scalar YAML may read as other than a string (null, bool, number...):
# kept, and written back, as written.
Special = collections.namedtuple("Special", "raw")
SPECIAL_RE = re.compile(r"(~|null|true|false|yes|no|on|off|y|n|[-+]?\.?[0-9].*|[-+]?\.(inf|nan))$", re.I)
QUOTED = {'"': re.compile(r'"((?:[^"\\\r\n]|\\.)*)"'), "'": re.compile(r"'((?:[^'\r\n]|'')*)'")}
ESCAPES = dict(zip('"\\/ntr0 bfaev', '"\\/\n\t\r\0 \b\f\a\x1b\v'))


# Plain scalars: words joined by spaces (tabs refused).  In block style a word
# holds no ': ' and no ' #'; in flow style no indicator, nor ':' or '?' at all:
# go-yaml v2, the EKS authenticator's YAML, refuses 'x:y' there and ends
# scalars at '?'.  PLAIN[flow]:
PLAIN = [re.compile(r"%s(?: +%s)*" % (w, w)) for w in (
    r"(?:[^\s:#]|:(?=\S)|(?<=\S)#)+", r"(?:[^\s:#,\[\]{}?]|(?<=\S)#)+")]


def unescape(m):
  e = m.group(1)
  if len(e) > 1 and int(e[1:], 16) < 0x110000 and not 0xD800 <= int(e[1:], 16) < 0xE000:
    return chr(int(e[1:], 16))
  if e not in ESCAPES:
    raise YamlError("unsupported escape \\" + e)
  return ESCAPES[e]


def scalar(s, i, flow):
  """Read the scalar at s[i]: (value, index after it)."""
  c, nxt = s[i:i + 1], s[i + 1:i + 2]
  if c in ('"', "'"):
    m = QUOTED[c].match(s, i)
    if not m:
      raise YamlError("unterminated or multi-line quoted scalar")
    if c == "'":
      return m.group(1).replace("''", "'"), m.end()
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", unescape, m.group(1)), m.end()
  m = PLAIN[flow].match(s, i)
  if not m or c in "&*!|>%@`,[]{}#?:" or m.group() in ("<<", "=") or c == "-" and (
      not nxt.strip() or flow and nxt in ",[]{}"):
    raise YamlError("unsupported YAML at %r" % s[i:i + 20])
  return (Special(m.group()) if SPECIAL_RE.match(m.group()) else m.group()), m.end()


def skip(s, i):
  """Skip white space, line breaks and comments."""
  while i < len(s):
    if s[i] == "#" and (i == 0 or s[i - 1] in " \t\r\n"):
      i = s.find("\n", i) % (len(s) + 1)  # to the end of the line, or of the text
    elif s[i] in " \t\r\n":
      i += 1
    else:
      break
  return i


def put(mapping, key, value):
  if not isinstance(key, str) or key in mapping:
    raise YamlError("unsupported or duplicate key %r" % (key,))
  mapping[key] = value


def flow(s, i):
  """Read the flow node ([...], {...} or a scalar) at s[i]."""
  i = skip(s, i)
  c = s[i:i + 1]
  if c not in ("[", "{"):
    return scalar(s, i, True)
  close, out = ("]", []) if c == "[" else ("}", {})
  i += 1
  while True:
    i = skip(s, i)
    if s[i:i + 1] == close:
      return out, i + 1
    value, i = flow(s, i)
    if c == "{":
      i = skip(s, i)
      if s[i:i + 1] != ":" or s[i - 1] not in "\"'" and s[i + 1:i + 2] not in (" ", "\t", "\r", "\n"):
        raise YamlError("flow mapping entry without ': value'")
      key, (value, i) = value, flow(s, i + 1)
      put(out, key, value)
    else:
      out.append(value)
    i = skip(s, i)
    if s[i:i + 1] == ",":
      i += 1
    elif s[i:i + 1] != close:
      raise YamlError("expected ',' or %r at %r" % (close, s[i:i + 20]))


def inline(body, j):
  """The value written on the rest of a line."""
  value, end = flow(body, j) if body[j:j + 1] in ("[", "{") else scalar(body, j, False)
  if skip(body, end) != len(body):
    raise YamlError("unexpected text %r" % body[end:])
  return value


def is_dash(body):
  return body == "-" or body[:2] in ("- ", "-\t")


def is_key(body):
  """Does the line start with 'key:'?"""
  j = 0 if body[0] in "[{" else skip(body, scalar(body, 0, False)[1])
  return body[j:j + 1] == ":" and body[j + 1:j + 2] in ("", " ", "\t")


class Block:
  """Block-style YAML over content lines (line number, indent, text)."""

  def __init__(self, lines):
    self.lines, self.i, self.spans = lines, 0, []

  def peek(self, deeper=-1):
    line = self.lines[self.i] if self.i < len(self.lines) else None
    if line and line[1] > deeper >= 0:
      raise YamlError("bad indentation (or a multi-line scalar) on line %d" % (line[0] + 1))
    return line

  def node(self, indent):
    body = self.lines[self.i][2]
    if is_dash(body):
      return self.seq(indent)
    if is_key(body):
      return self.mapping(indent)
    self.i += 1
    return inline(body, 0)

  def seq(self, indent, top=False):
    items = []
    while self.peek() and self.peek()[1] == indent and is_dash(self.peek()[2]):
      n, _, body = self.peek()
      rest = body[1:].lstrip(" \t")
      if rest == "" or rest[0] == "#":  # the item is on the next lines
        self.i += 1
        nxt = self.peek()
        items.append(self.node(nxt[1]) if nxt and nxt[1] > indent else Special(""))
      else:  # "- key: value": the item starts on the dash's line
        self.lines[self.i] = (n, indent + len(body) - len(rest), rest)
        items.append(self.node(indent + len(body) - len(rest)))
      if top:
        self.spans.append((n, self.lines[self.i - 1][0]))
      self.peek(indent)
    return items

  def mapping(self, indent):
    out = {}
    while self.peek() and self.peek()[1] == indent:
      n, _, body = self.peek()
      if is_dash(body) or not is_key(body):
        raise YamlError("expected 'key: value' on line %d" % (n + 1))
      key, j = scalar(body, 0, False)
      j = skip(body, skip(body, j) + 1)
      self.i += 1
      if j < len(body):
        value = inline(body, j)
      else:  # the value is on the next lines (maybe an indentless list), or null
        nxt = self.peek()
        deeper = nxt and (nxt[1] > indent or nxt[1] == indent and is_dash(nxt[2]))
        value = self.node(nxt[1]) if deeper else Special("")
      put(out, key, value)
      self.peek(indent)
    return out


def parse_map_roles(text):
  """(entries, spans, indent): spans holds each entry's (first, last) line
  in a block list, None for a flow list."""
  lines = []
  for n, line in enumerate(text.split("\n")):
    body = line.rstrip("\r").lstrip(" ")
    if body.strip() and body[0] != "#":
      if body[0] == "\t":
        raise YamlError("tab in indentation on line %d" % (n + 1))
      if body.rstrip() in ("---", "...") or body[:4] == "--- ":
        raise YamlError("document markers are not supported")
      lines.append((n, len(line) - len(line.lstrip(" ")), body.rstrip(" \t\r")))
  doc, spans, indent = [], [], lines[0][1] if lines else 0
  if lines and lines[0][2][0] in "[{":
    doc, end = flow(text, 0)
    if skip(text, end) != len(text):
      raise YamlError("unexpected text after the flow list")
    spans = None
  elif lines:
    block = Block(lines)
    doc = block.seq(indent, True) if is_dash(lines[0][2]) else block.node(indent)
    if block.peek():
      raise YamlError("unexpected content on line %d" % (block.peek()[0] + 1))
    spans = block.spans
  if not isinstance(doc, list):
    raise YamlError("mapRoles is not a list")
  for k, entry in enumerate(doc, 1):
    if not isinstance(entry, dict):
      raise YamlError("entry %d is not a mapping" % k)
    for key, v in entry.items():
      if not all(isinstance(x, (str, Special)) for x in (v if isinstance(v, list) else [v])):
        raise YamlError("entry %d: %r is nested deeper than aws-auth uses" % (k, key))
  return doc, spans, indent


PLAIN_SAFE = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./:@=+,{}()-]*(?<!:)")


def emit_scalar(v):
  if isinstance(v, Special):
    return v.raw
  if PLAIN_SAFE.fullmatch(v) and not SPECIAL_RE.match(v):
    return v
  v = json.dumps(v, ensure_ascii=False)  # a JSON string is a YAML "..." scalar
  return re.sub("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]", lambda m: "\\u%04x" % ord(m.group()), v)


def emit_entries(entries, indent=0):
  """The canonical block form of a list of entries."""
  pad, out = " " * indent, []
  for entry in entries:
    lead = pad + "- "
    out += [lead + "{}"] if not entry else []
    for key, v in entry.items():
      head = lead + emit_scalar(key) + ":"
      if isinstance(v, list):
        out += [head + ("" if v else " []")] + [(pad + "  - " + emit_scalar(x)).rstrip() for x in v]
      else:
        out.append((head + " " + emit_scalar(v)).rstrip())
      lead = pad + "  "
  return "".join(line + "\n" for line in out)


# --- the mapping ---

def strip_path(arn):
  """aws-auth matches role ARNs without their IAM path."""
  m = ROLE_RE.fullmatch(arn)
  return m.group(1) + m.group(2) if m else arn


def maps_role(entry, arn):
  v = entry.get("rolearn")
  return isinstance(v, str) and strip_path(v).lower() == arn.lower()


def same_mapping(entry, want):
  """entry maps want's role to want's username and groups (in any order)."""
  g = entry.get("groups")
  return (maps_role(entry, want["rolearn"]) and entry.get("username") == want["username"]
          and isinstance(g, list) and set(g) == set(want["groups"]))


def edit_map_roles(text, remove=None, add=None):
  """mapRoles with the entries that are the mapping `remove` taken out and
  the mapping `add` put in; None when nothing changes.

  A block list is edited as text: the lines of removed entries are cut and
  a new entry is appended at the list's indentation, so every other byte
  (comments, quoting, key order) stays as written.  A flow list (the CDK's
  JSON) is rewritten in canonical block form.  Either way the result is
  parsed again and must hold exactly the expected entries.
  """
  entries, spans, indent = parse_map_roles(text)
  gone = [k for k, e in enumerate(entries) if remove and same_mapping(e, remove)]
  keep = [e for k, e in enumerate(entries) if k not in gone]
  if add and any(same_mapping(e, add) for e in keep):
    add = None  # already mapped exactly so
  if add and any(maps_role(e, add["rolearn"]) for e in keep):
    raise Failure("%s is already mapped in aws-auth with another username or groups; refusing to "
                  "add a second, conflicting mapping" % add["rolearn"])
  if not gone and not add:
    return None
  want, new = keep + [add] * bool(add), None
  if spans is not None:
    cut = {n for k in gone for n in range(spans[k][0], spans[k][1] + 1)}
    new = "\n".join(line for n, line in enumerate(text.split("\n")) if n not in cut)
    if add:
      new = ("" if not new.strip() else new if new.endswith("\n") else new + "\n") + emit_entries([add], indent)
    try:
      new = new if parse_map_roles(new)[0] == want else None
    except YamlError:
      new = None
  if new is None:
    new = emit_entries(want)
    if parse_map_roles(new)[0] != want:
      raise Failure("internal error: cannot write mapRoles without losing entries")
  return new


def modify(inv, remove=None, add=None):
  """Read-modify-write aws-auth with its resourceVersion, retrying while
  others write it too: written, unchanged or absent."""
  for attempt in range(1, MAX_ATTEMPTS + 1):
    status, raw = inv.kube("GET", CM_PATH)
    if status == 404 and not add:
      return "absent"
    if status == 404:
      cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "aws-auth", "namespace": "kube-system"},
            "data": {"mapRoles": edit_map_roles("", None, add)}}
      status, raw = inv.kube("POST", CM_LIST, cm)
    elif status == 200:
      cm = json.loads(raw)
      text = (cm.get("data") or {}).get("mapRoles", "")
      try:
        if not isinstance(text, str):
          raise YamlError("not a string")
        new = edit_map_roles(text, remove, add)
      except YamlError as err:
        raise Failure("refusing to edit aws-auth mapRoles, which this provider cannot read "
                      "with certainty: %s" % err)
      if new is None:
        return "unchanged"
      cm["data"] = dict(cm.get("data") or {}, mapRoles=new)  # all else goes back as it came
      status, raw = inv.kube("PUT", CM_PATH, cm)
      status = 409 if status == 404 else status  # deleted meanwhile: start again
    else:
      raise Failure("reading aws-auth failed, " + why(status, raw))
    if status in (200, 201):
      return "written"
    if status != 409:
      raise Failure("writing aws-auth failed, " + why(status, raw))
    delay = random.uniform(0, min(2.0, 0.05 * 2 ** attempt))  # backoff with full jitter
    if time.monotonic() + delay > inv.deadline - 1:
      break
    log("409 Conflict on attempt %d: retrying in %.2f s" % (attempt, delay))
    time.sleep(delay)
  raise Failure("aws-auth kept changing (409 Conflict); gave up after %d attempts" % attempt)


# --- the request ---

def mapping(props):
  """Check the resource properties: (cluster name, the entry to write)."""
  props = props if isinstance(props, dict) else {}
  cluster, arn, groups = props.get("ClusterName"), props.get("RoleArn"), props.get("Groups")
  if not isinstance(cluster, str) or not CLUSTER_RE.fullmatch(cluster):
    raise Refused("ClusterName %r is not an EKS cluster name" % (cluster,))
  if not isinstance(arn, str) or not ROLE_RE.fullmatch(arn):
    raise Refused("RoleArn %r is not an IAM role ARN" % (arn,))
  username = props.get("Username")
  if username not in USERNAMES:
    raise Refused("Username must be %s or %s: only node roles are mapped" % USERNAMES)
  if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
    raise Refused("Groups must be a list of group names")
  if not set(GROUPS[:2]) <= set(groups) <= set(GROUPS):
    raise Refused("refusing Groups %s: %s and %s are required, %s is allowed, no other"
                  % (", ".join(groups), *GROUPS))
  return cluster, {"rolearn": strip_path(arn), "username": username, "groups": list(dict.fromkeys(groups))}


def run(inv):
  """Carry out the request; returns the PhysicalResourceId."""
  event = inv.event
  kind, old_id = event["RequestType"], event.get("PhysicalResourceId")
  if kind == "Delete":
    try:
      cluster, entry = mapping(event.get("ResourceProperties"))
    except Refused as err:
      log("nothing to delete: this mapping was never written (%s)" % err)
      return old_id
    if (old_id or "").startswith(REFUSED_ID):
      return old_id
    inv.physical_id = old_id
    if inv.describe(cluster) is None:
      log("cluster %s is gone: nothing to remove" % cluster)
    else:
      log("%s: %s" % (entry["rolearn"], modify(inv, remove=entry)))
    return old_id
  if kind not in ("Create", "Update"):
    raise Failure("unknown RequestType %r" % kind)
  cluster, entry = mapping(event["ResourceProperties"])
  new_id = "aws-auth/%s/%s" % (cluster, entry["rolearn"])
  inv.physical_id, old = (new_id if kind == "Create" else old_id), None
  if kind == "Update":
    try:
      old_cluster, old = mapping(event.get("OldResourceProperties"))
    except Refused:
      old_cluster = None  # an invalid old mapping was never written
    if old_cluster not in (None, cluster):
      # Another cluster: map the role there, under a new id, and
      # CloudFormation's cleanup Deletes the old mapping in the old one.
      inv.physical_id, old = new_id, None
    elif old and same_mapping(old, entry):
      old = None
  if inv.describe(cluster) is None:
    raise Failure("EKS cluster %s not found in %s" % (cluster, inv.region))
  log("%s: %s" % (entry["rolearn"], modify(inv, old, entry)))
  return inv.physical_id


def answer(inv, status, reason, pid):
  """PUT the one response of this invocation to CloudFormation."""
  with inv.lock:
    if inv.answered:
      return
    inv.answered = True
  event = inv.event
  log("answering %s: %s" % (status, reason))
  body = json.dumps({
      "Status": status, "Reason": reason[:2000], "PhysicalResourceId": pid or event.get("RequestId") or "none",
      "StackId": event.get("StackId"), "RequestId": event.get("RequestId"),
      "LogicalResourceId": event.get("LogicalResourceId"), "NoEcho": False, "Data": {}}).encode()
  for _ in range(2):  # one retry
    try:
      timeout = max(1.0, min(NET_TIMEOUT, inv.deadline - time.monotonic()))
      code = http("PUT", event["ResponseURL"], {"Content-Type": ""}, body, timeout=timeout)[0]
      log("CloudFormation took the response: HTTP %d" % code)
      if code < 500:
        return
    except Exception as err:  # noqa: BLE001
      log("sending the response failed: %s" % err)


def handler(event, context):
  inv = Invocation(event, context)
  timer = threading.Timer(inv.watchdog_delay, lambda: answer(
      inv, "FAILED", "timed out before the Lambda deadline", inv.physical_id))
  timer.daemon = True
  timer.start()
  try:
    log("%s %s, request %s" % (event.get("RequestType"), event.get("LogicalResourceId"), event.get("RequestId")))
    answer(inv, "SUCCESS", "OK", run(inv))
  except Refused as err:
    if event.get("RequestType") == "Create":
      inv.physical_id = REFUSED_ID + str(event.get("RequestId"))
    answer(inv, "FAILED", "refused: %s" % err, inv.physical_id or event.get("PhysicalResourceId"))
  except Exception as err:  # noqa: BLE001 - CloudFormation always gets an answer
    reason = str(err) if isinstance(err, Failure) else "%s: %s" % (type(err).__name__, err)
    answer(inv, "FAILED", reason, inv.physical_id or event.get("PhysicalResourceId"))
  finally:
    timer.cancel()
