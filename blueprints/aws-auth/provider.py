"""eksynth's Custom::AwsAuth provider: maps one node IAM role in an EKS
cluster's kube-system/aws-auth ConfigMap; the last owner's Delete removes it.
It serves Custom::NodeAccessEntry too: a node role's EKS access entry, shared
by the stacks that own it.  Standard library only.  See
blueprints/aws-auth/README.md in eksynth."""
import base64
import bisect
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
OWNERS = "eksynth.io/aws-auth-owners"  # annotation: {role ARN: [StackId#LogicalResourceId]}
UNKNOWN = "unknown"  # the owner of an entry found without owners
REFUSED_ID = "aws-auth-refused/"  # PhysicalResourceId of a refused Create: its Delete does nothing
NET_TIMEOUT = 10.0  # seconds, the most one network call may take
ENTRY_TYPES = ("EC2_LINUX", "EC2_WINDOWS", "EC2")  # node access entries: no groups, no policies
OWNER_TAG = "eksynth.io/owner/"  # + a hash of StackId#LogicalResourceId: one tag per owner of an entry
MADE_TAG = "eksynth.io/made"  # on an entry this provider created, which its last owner's Delete removes
SETTLE = 10.0  # seconds before a Create looks again at the entry it took (a last owner's Delete may race it)
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
  # Each path segment is URI-encoded twice for every service but S3: a
  # segment that holds an encoded ARN is signed with its '%' encoded again.
  canonical_path = path if service == "s3" else urllib.parse.quote(path, safe="/-_.~")
  canonical = "\n".join([method, canonical_path, query, "".join(
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

  def eks(self, method, path, body=None):
    """One call to EKS's API (after describe): (status, the JSON answer or {})."""
    data = json.dumps(body).encode() if body is not None else None
    url, hdrs = sigv4(method, eks_endpoint(self.region) + path, self.creds, self.region, "eks", utcnow(),
                      {"Content-Type": "application/json"} if data else None,
                      payload_hash=hashlib.sha256(data or b"").hexdigest())
    status, raw = http(method, url, hdrs, data, timeout=self.timeout())
    log("eks %s %s -> %d" % (method, urllib.parse.unquote(path.split("?")[0]), status))
    try:
      return status, json.loads(raw) if raw else {}
    except ValueError:
      return status, {"message": raw.decode("utf-8", "replace")[:400]}

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
# Read as the EKS authenticator's go-yaml v2 reads it; what cannot be read
# with certainty raises YamlError (the README's "YAML handling" lists both).

class YamlError(Exception):
  pass


# A plain scalar YAML may read as other than a string (null, bool, number...):
# kept, and written back, as written.
Special = collections.namedtuple("Special", "raw")
SPECIAL_RE = re.compile(r"(|~|null|true|false|yes|no|on|off|y|n|[-+.0-9].*)$", re.I)
MERGE, EMPTY = Special("<<"), Special("")
# The escapes go-yaml v2 knows ('\/', which YAML 1.2 added, is not one).
ESCAPES = dict(zip('0abtnvfre "\\N_LP\t', '\0\a\b\t\n\v\f\r\x1b "\\\x85\xa0\u2028\u2029\t'))
# What YAML forbids, and line breaks YAML 1.1 reads and 1.2 does not.
BAD_CHAR = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]")
NAME = re.compile(r"[0-9A-Za-z_-]+")
# One line of a plain scalar, PLAIN[flow]: it ends at ': ' and ' #', in flow
# style also at ,[]{}? (and at ':' before them, which go-yaml v2 and PyYAML
# read differently).
PLAIN = [re.compile(r"(?:[^\n\t:# ]|:(?=[^\t\n ])|(?<! )#| +(?=[^\n\t #]))*"),
         re.compile(r"(?:[^\n\t:# ,\[\]{}?]|:(?=[^\t\n ,\[\]{}])|(?<! )#| +(?=[^\n\t #,\[\]{}?]))*")]
BLOCK_HEADER = re.compile(r"([|>])(?:([-+])([1-9])?|([1-9])([-+])?)?")


class Reader:
  """Recursive descent over one YAML document.  n is the indentation of the
  enclosing block collection (-1 at the top); self.last ends the last token."""

  def __init__(self, text):
    text = text[1:] if text[:1] == "\ufeff" else text
    bad = BAD_CHAR.search(text)
    if bad:
      raise YamlError("character %r is not allowed" % bad.group())
    self.s, self.i, self.last, self.anchors = text.replace("\r\n", "\n").replace("\r", "\n"), 0, 0, {}
    self.spans, self.indent = [], 0
    self.breaks = [m.start() for m in re.finditer("\n", self.s)]  # to number lines at once

  def fail(self, what):
    raise YamlError("%s on line %d" % (what, self.line(self.i) + 1))

  def line(self, i):
    return bisect.bisect_left(self.breaks, i)

  def at(self, k=0):
    return self.s[self.i + k:self.i + k + 1]

  def blank(self, k=0):
    return self.at(k) in ("", " ", "\t", "\n")

  def dash(self):
    return self.at() == "-" and self.blank(1)

  def col(self):
    return self.i - self.s.rfind("\n", 0, self.i) - 1

  def marker(self):
    """At '---' or '...' starting a line?"""
    return self.col() == 0 and self.s[self.i:self.i + 3] in ("---", "...") and self.blank(3)

  def to_eol(self):
    self.i = self.s.find("\n", self.i) % (len(self.s) + 1)

  def gap(self):
    """Skip spaces, comments and line breaks: whether a line ended."""
    s, nl = self.s, False
    while self.i < len(s):
      c = s[self.i]
      if c == "#" and (self.i == 0 or s[self.i - 1] in " \n"):
        self.to_eol()
      elif c in " \n":
        nl, self.i = nl or c == "\n", self.i + 1
      elif c == "\t":
        self.fail("a tab outside quotes and block scalars")
      else:
        break
    return nl

  def eol(self):
    """The line ends (maybe with a comment) after a node."""
    if not (self.gap() or self.i == len(self.s)):
      self.fail("unexpected text after a value")

  def document(self):
    self.gap()
    directive = self.at() == "%" and self.col() == 0
    while self.at() == "%" and self.col() == 0:
      if not re.compile(r"%YAML +1\.[12](?: +(?:#.*)?)?$", re.M).match(self.s, self.i):
        self.fail("a directive other than %YAML 1.1 or 1.2")
      self.to_eol()
      self.gap()
    explicit = self.marker() and self.at() == "-"
    if explicit:
      self.i += 3
    elif directive:
      self.fail("a directive without '---'")
    root = self.block(-1, False, not explicit or self.gap())
    self.gap()
    if self.marker() and self.at() == "." and root is EMPTY and not explicit:
      self.fail("'...' without a document")
    if self.marker() and self.at() == ".":
      self.i += 3
      self.gap()
    if self.i < len(self.s):
      self.fail("a second YAML document" if self.marker() else "unexpected text")
    return root

  def props(self):
    """An anchor and a tag before a node: (anchor, tag, whether a line ended)."""
    anchor = tag = None
    nl = False
    while self.at() in ("&", "!"):
      m = (NAME.match(self.s, self.i + 1) if self.at() == "&" else
           re.compile(r"!!?[^ \n,\[\]{}]*").match(self.s, self.i))
      if not m or not (self.blank(m.end() - self.i) or self.s[m.end()] in ",]}") or (tag, anchor)[self.at() == "&"]:
        self.fail("an invalid, or a second, anchor or tag")
      if self.at() == "&":
        anchor = m.group()
      elif m.group() != "!!str":
        self.fail("the tag %s" % m.group())
      tag, self.i = tag or m.group() if self.at() == "!" else tag, m.end()
      if self.gap():
        nl = True
        break
    if (anchor or tag) and self.at() == "*":
      self.fail("an anchor or tag on an alias")
    return anchor, tag, nl

  def keep(self, anchor, tag, node):
    if tag and not isinstance(node, (str, Special)):
      self.fail("!!str on a collection")
    node = node.raw if tag and isinstance(node, Special) else node
    if anchor:
      self.anchors[anchor] = node
    return node

  def ends(self, n, nl):
    """Is the node at self.i empty?"""
    return self.i == len(self.s) or nl and (self.col() <= n or self.marker())

  def block(self, n, compact, nl, value=False, props=False):
    """The block node after '-' (compact: a collection may start on its
    line), ':' (value: a list may start at n) or a document's start; nl: it
    starts on a later line; props: its anchor or tag came on a line before."""
    if self.ends(n, nl) and not (value and nl and self.col() == n and self.dash()):
      return EMPTY
    c, (anchor, tag, nl2) = self.col(), self.props()
    twice = props and (anchor or tag)  # unless they are a key's
    if twice and nl2:
      self.fail("a second anchor or tag")
    if nl2:  # the properties of the node on the next lines
      return self.keep(anchor, tag, self.block(n, compact, True, value, True))
    line = self.line(self.i)
    if self.dash():
      if not (nl or compact) or anchor or tag:
        self.fail("a block list cannot start here")
      return self.keep(anchor, tag, self.seq(c, n < 0))
    if self.at() in ("|", ">") and not twice:
      return self.keep(anchor, tag, self.literal(n))
    if self.at() == "?" and self.blank(1):
      self.fail("a complex key ('?')")
    node, j = self.inline(n), self.i
    while self.at() == " ":
      self.i += 1
    if self.at() == ":" and self.blank(1):
      if not (nl or compact) or self.line(self.i) != line:
        self.fail("a mapping cannot start here")
      return self.mapping(c, self.keep(anchor, tag, node))  # properties on the key's line are the key's
    if twice:
      self.fail("a second anchor or tag")
    self.i = j
    self.eol()
    return self.keep(anchor, tag, node)

  def more(self, c):
    """After a collection's entry: does the next one start at column c?"""
    self.gap()
    if self.i == len(self.s) or self.marker() or self.col() < c:
      return False
    if self.col() > c:
      self.fail("bad indentation")
    return True

  def seq(self, c, top=False):
    out, self.indent = [], c if top else self.indent
    while True:
      first, self.last = self.line(self.i), self.i + 1
      self.i += 1
      out.append(self.check(self.block(c, True, self.gap())))
      if top:
        self.spans.append((first, self.line(self.last - 1)))
      if not (self.more(c) and self.dash()):
        return out

  def mapping(self, c, key):
    out = {}
    while True:
      self.i += 1  # the ':'
      nl = self.gap()
      value = self.block(c, False, nl, True)
      self.put(out, key, value)
      if not self.more(c):
        return out
      anchor, tag, nl = self.props()
      line = self.line(self.i)
      if nl or self.at() in ("-", "?") and self.blank(1):
        self.fail("expected 'key: value'")
      key = self.keep(anchor, tag, self.inline(c))
      while self.at() == " ":
        self.i += 1
      if not (self.at() == ":" and self.blank(1)) or self.line(self.i) != line:
        self.fail("expected 'key: value'")

  def put(self, out, key, value):
    if isinstance(key, (list, dict)):
      self.fail("a list or mapping as a key")
    if key != MERGE:
      out[key] = self.check(value)
      return
    # go-yaml v2 merges in order, so that a later key wins (PyYAML keeps the
    # mapping's own keys); of a list of mappings, the first wins.
    for merged in (value if isinstance(value, list) else [value])[::-1]:
      if not isinstance(merged, dict):
        self.fail("'<<' merges mappings only")
      out.update(merged)

  def check(self, node):
    if node == MERGE:
      self.fail("'<<' as a value")
    return node

  def inline(self, n, flow=False):
    """An alias, a flow collection, a quoted or a plain scalar."""
    c = self.at()
    if c == "*":
      m = NAME.match(self.s, self.i + 1)
      if not m or m.group() not in self.anchors:
        self.fail("an undefined alias")
      self.i = self.last = m.end()
      return self.anchors[m.group()]
    if c in ("[", "{"):
      return self.flow()
    if c in ("'", '"'):
      return self.quoted()
    return self.plain(n, flow)

  def flow_node(self):
    return self.keep(*self.props()[:2], node=self.inline(-1, True))

  def flow(self):
    close, out = ("]", []) if self.at() == "[" else ("}", {})
    self.i += 1
    while True:
      self.gap()
      if self.marker():
        self.fail("a document marker in a flow collection")
      if self.at() == close:
        self.i = self.last = self.i + 1
        return out
      if self.at() in ("?", ":", ",", ""):
        self.fail("an unsupported or unterminated flow collection")
      line, key = self.line(self.i), self.flow_node()
      self.gap()
      if self.at() == ":" and self.line(self.i) != line:
        self.fail("a key over more than one line")
      if self.at() == ":":
        self.i += 1
        self.gap()
        value = EMPTY if self.at() in (",", close) else self.flow_node()
        self.gap()
        self.put(out if close == "}" else out.append({}) or out[-1], key, value)
      elif close == "]":
        out.append(self.check(key))
      else:
        self.put(out, key, EMPTY)
      if self.at() == ",":
        self.i += 1
      elif self.at() != close:
        self.fail("expected ',' or '%s'" % close)

  def fold(self):
    """Line breaks in a quoted scalar, folded."""
    breaks = 0
    while self.at() == "\n":
      self.i += 1
      if self.marker():
        self.fail("a document marker in a quoted scalar")
      while self.at() in (" ", "\t"):
        self.i += 1
      breaks += self.at() == "\n"
    return "\n" * breaks or " "

  def quoted(self):
    q, out = self.at(), []
    self.i += 1
    while True:
      m = re.compile(r'[^"\\\n]*' if q == '"' else r"[^'\n]*").match(self.s, self.i)
      self.i = m.end()
      c = self.at()
      out.append(m.group().rstrip(" \t") if c == "\n" else m.group())
      if c == "'" and self.at(1) == "'":
        out.append("'")
        self.i += 2
      elif c == q:
        self.i = self.last = self.i + 1
        return "".join(out)
      elif c == "\n":
        out.append(self.fold())
      elif c == "\\" and self.at(1) == "\n":
        self.i += 1
        out.append(self.fold().strip(" "))
      elif c == "\\":
        out.append(self.escape())
      else:
        self.fail("an unterminated quoted scalar")

  def escape(self):
    m = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)").match(self.s, self.i)
    e = m.group(1) if m else ""
    cp = int(e[1:], 16) if len(e) > 1 else None
    if cp is None and e not in ESCAPES or cp is not None and (cp >= 0x110000 or 0xD800 <= cp < 0xE000):
      self.fail("the escape \\" + e)
    self.i += 1 + len(e)
    return ESCAPES[e] if cp is None else chr(cp)

  def plain(self, n, flow):
    c = self.at()  # '-', '?' and ':' start a plain scalar only before a character that continues it
    indicator = c in "-?:" and (self.blank(1) or flow and (c != "-" or self.at(1) in tuple(",[]{}")))
    if not c or c in ",[]{}#&*!|>'\"%@`" or indicator:
      self.fail("unexpected %r" % c)
    out, sep, j = [], "", self.i
    while True:
      m = PLAIN[flow].match(self.s, self.i)
      t = m.group().rstrip(" ")
      if not t:
        break
      out.append(sep + t)
      self.i = j = self.last = m.start() + len(t)
      while self.at() == " ":
        self.i += 1
      if flow and (self.at() == "?" or self.at() == ":" and self.at(1) in tuple(",[]{}")):
        self.fail("'%s' after a plain scalar in a flow collection" % self.at())
      if self.at() != "\n":
        break
      breaks = -1
      while self.at() in ("\n", " "):
        breaks, self.i = breaks + (self.at() == "\n"), self.i + 1
      if self.at() in ("", "#", "\t") or self.marker() or not flow and self.col() <= n:
        break
      sep = "\n" * breaks or " "
    self.i, text = j, "".join(out)
    if text == "=":
      self.fail("'=' as a value")
    return MERGE if text == "<<" else Special(text) if SPECIAL_RE.match(text) else text

  def literal(self, n):
    """A block scalar (| or >) with its chomping and indentation indicators."""
    s, m = self.s, BLOCK_HEADER.match(self.s, self.i)
    self.i = self.last = m.end()
    while self.at() == " ":
      self.i += 1
    if self.at() == "#" and self.i > m.end():
      self.to_eol()
    if not self.at() in ("", "\n"):
      self.fail("an invalid block scalar header")
    chomp, digit = m.group(2) or m.group(5), m.group(3) or m.group(4)
    indent = max(n, 0) + int(digit) if digit else None
    out, empty, lead, prev, p, brk = [], 0, 0, None, self.i + 1, ""
    while p < len(s):
      e = s.find("\n", p) % (len(s) + 1)
      x = s[p:e]
      sp = len(x) - len(x.lstrip(" "))
      if x[sp:sp + 1] == "\t" and (indent is None or sp < indent):  # go-yaml v2 refuses it
        self.fail("a tab in a block scalar's indentation")
      if indent is None and x.strip(" "):
        indent = max(sp, n + 1, 1)
        if lead > indent:
          self.fail("a block scalar's leading empty line is indented more than its text")
      if not x.strip(" ") and (indent is None or sp <= indent):
        empty, lead = empty + (e < len(s)), max(lead, sp)
      elif sp < indent:
        break
      else:
        t = x[indent:]
        fold = m.group(1) == ">" and prev and prev[0] not in " \t" and t[0] not in " \t"
        out.append(("\n" * empty or " ") if fold else "\n" * (empty + (prev is not None)))
        out.append(t)
        prev, empty, brk, self.last = t, 0, "\n" * (e < len(s)), e
      p = e + 1
    self.i = min(p, len(s))
    self.last = self.i if chomp == "+" else self.last  # the kept empty lines are the scalar's
    return "".join(out) + ("" if chomp == "-" else brk + "\n" * empty * (chomp == "+"))


def count(v, budget):
  """Fewer than budget nodes, aliases expanded (a small text can alias a
  huge one)?"""
  for x in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()):
    budget = count(x, budget - 1)
  if budget < 0:
    raise YamlError("too many nodes once aliases are expanded")
  return budget


def parse_map_roles(text):
  """(entries, spans, indent): spans holds each entry's (first, last) line
  when mapRoles is a block list or empty, else it is None."""
  reader = Reader(text)
  try:
    doc = reader.document()
  except RecursionError:
    raise YamlError("nested too deeply")
  if doc == EMPTY and not reader.s.strip(" \n"):
    doc = []
  elif doc in (EMPTY, Special("~")) or isinstance(doc, Special) and doc.raw in ("null", "Null", "NULL"):
    doc, reader.spans = [], None
  if not isinstance(doc, list):
    raise YamlError("mapRoles is not a list")
  for k, entry in enumerate(doc, 1):
    if not isinstance(entry, dict):
      raise YamlError("entry %d is not a mapping" % k)
  count(doc, 100000)
  return doc, reader.spans if reader.spans or not doc else None, reader.indent


PLAIN_SAFE = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./:@=+,{}()-]*(?<!:)")


def emit_scalar(v):
  if isinstance(v, Special):
    return v.raw
  if PLAIN_SAFE.fullmatch(v) and not SPECIAL_RE.match(v):
    return v
  v = json.dumps(v, ensure_ascii=False)  # a JSON string is a YAML "..." scalar
  return re.sub("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]", lambda m: "\\u%04x" % ord(m.group()), v)


def emit_block(v, pad=""):
  """The lines of a list or a mapping in block style."""
  out = []
  for k, x in (v.items() if isinstance(v, dict) else [(None, x) for x in v]):
    head = pad + ("- " if k is None else emit_scalar(k) + ": ")
    if x and isinstance(x, (list, dict)):
      sub = emit_block(x, pad + "  ")
      out += [head + sub[0][len(pad) + 2:]] + sub[1:] if k is None else [head.rstrip()] + sub
    else:
      out.append((head + ("[]" if x == [] else "{}" if x == {} else emit_scalar(x))).rstrip())
  return out


def emit_entries(entries, indent=0):
  """The canonical block form of a list of entries."""
  return "".join(line + "\n" for line in emit_block(entries, " " * indent))


# --- the mapping ---

def strip_path(arn):
  """aws-auth matches role ARNs without their IAM path."""
  m = ROLE_RE.fullmatch(arn)
  return m.group(1) + m.group(2) if m else arn


def field(entry, name):
  """entry's name as the authenticator reads it: Go's JSON matches keys
  case-insensitively, and of several, the last in byte order wins."""
  keys = [k for k in entry if isinstance(k, str) and k.lower() == name]
  return entry[max(keys)] if keys else None


def maps_role(entry, arn):
  v = field(entry, "rolearn")
  return isinstance(v, str) and strip_path(v).lower() == arn.lower()


def same_mapping(entry, want):
  """entry maps want's role to want's username and groups (in any order)."""
  g = field(entry, "groups")
  return (maps_role(entry, want["rolearn"]) and field(entry, "username") == want["username"]
          and isinstance(g, list) and set(g) == set(want["groups"]))


def edit_map_roles(text, remove=None, add=None, parsed=None):
  """mapRoles with the entries that are the mapping `remove` taken out and
  the mapping `add` put in; None when nothing changes.  parsed: what
  parse_map_roles(text) returned, when the caller has read it already.
  A block list is edited as text, anything else (or a cut that changes what
  the rest reads as) rewritten in canonical form; either way the result must
  read as exactly the expected entries (the README's "YAML handling")."""
  entries, spans, indent = parsed or parse_map_roles(text)
  gone = [k for k, e in enumerate(entries) if remove and same_mapping(e, remove)]
  keep = [e for k, e in enumerate(entries) if k not in gone]
  if add and any(same_mapping(e, add) for e in keep):
    add = None  # already mapped exactly so
  if add and any(maps_role(e, add["rolearn"]) for e in keep):
    raise Failure("%s is already mapped in aws-auth with another username or groups; refusing to "
                  "add a second, conflicting mapping" % add["rolearn"])
  if not gone and not add:
    return None
  want = keep + [add] * bool(add)
  if spans is not None and "\r" not in text.replace("\r\n", ""):
    lines, eol = text.split("\n"), "\r" * ("\r\n" in text)
    at = spans[-1][1] + 1 if spans else len(lines) - (lines[-1] == "")
    ours = [line + eol for line in emit_block([add], " " * indent)] if add else []
    cut = {n for k in gone for n in range(spans[k][0], spans[k][1] + 1)}
    if at == len(lines) and ours and lines[-1]:
      lines[-1] += eol  # the text ends without a line break
    new = "\n".join([x for n, x in enumerate(lines[:at]) if n not in cut] + ours + lines[at:])
    if holds(new, want):
      return new
  new = emit_entries(want)
  if not holds(new, want):
    raise Failure("internal error: cannot write mapRoles without losing entries")
  return new


def holds(text, want):
  """Does text read as exactly the entries want?"""
  try:
    return parse_map_roles(text)[0] == want
  except YamlError:
    return False


def edit(cm, owner, remove=None, add=None):
  """Take owner off the mapping `remove` and put it on `add`, in cm's owners
  annotation; an entry goes only with its last owner.  Whether cm changed."""
  notes = dict(cm.setdefault("metadata", {}).get("annotations") or {})
  table = json.loads(notes.get(OWNERS) or "{}")
  if not isinstance(table, dict) or not all(
      isinstance(v, list) and all(isinstance(o, str) for o in v) for v in table.values()):
    raise YamlError("annotation %s is not {role ARN: [owners]}" % OWNERS)
  text = (cm.get("data") or {}).get("mapRoles", "")
  if not isinstance(text, str):
    raise YamlError("mapRoles is not a string")
  parsed, new, cut = parse_map_roles(text), dict(table), None
  for want in (remove, add):
    if not want:
      continue
    key = next((k for k in new if k.lower() == want["rolearn"].lower()), want["rolearn"])
    held, owners = any(same_mapping(e, want) for e in parsed[0]), set(new.pop(key, ()))
    if want is remove:
      cut = remove if held and owners == {owner} else None
      owners.discard(owner)
    else:  # an entry found without owners has unknown ones; owners without their entry are stale
      owners = ((owners or {UNKNOWN}) if held else set()) | {owner}
    new.update({key: sorted(owners)} if owners else {})
    log("%s: %d owner(s) recorded%s" % (key, len(owners), ", the entry goes" * (cut is want)))
  text = edit_map_roles(text, cut, add, parsed)
  if text is None and new == table:
    return False
  if new:
    notes[OWNERS] = json.dumps(new, sort_keys=True)
  else:
    notes.pop(OWNERS, None)
  cm["metadata"]["annotations"] = notes
  if text is not None:
    cm["data"] = dict(cm.get("data") or {}, mapRoles=text)  # all else goes back as it came
  return True


def modify(inv, remove=None, add=None):
  """Read-modify-write aws-auth with its resourceVersion, retrying while
  others write it too: written, unchanged or absent."""
  owner = "%s#%s" % (inv.event.get("StackId"), inv.event.get("LogicalResourceId"))
  for attempt in range(1, MAX_ATTEMPTS + 1):
    status, raw = inv.kube("GET", CM_PATH)
    if status == 404 and not add:
      return "absent"
    if status not in (200, 404):
      raise Failure("reading aws-auth failed, " + why(status, raw))
    cm = json.loads(raw) if status == 200 else {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "aws-auth", "namespace": "kube-system"}}
    try:
      if not edit(cm, owner, remove, add):
        return "unchanged"
    except (YamlError, ValueError, Failure) as err:
      if not add:  # a Delete never blocks a stack: left as it is, said in the log
        log("aws-auth left as it is, this provider cannot edit it with certainty: %s" % err)
        return "left as it is"
      if isinstance(err, Failure):
        raise
      raise Failure("refusing to edit aws-auth, which this provider cannot read with certainty: %s" % err)
    if status == 200:
      status, raw = inv.kube("PUT", CM_PATH, cm)
      status = 409 if status == 404 else status  # deleted meanwhile: start again
    else:
      status, raw = inv.kube("POST", CM_LIST, cm)
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
  if event.get("ResourceType") == "Custom::NodeAccessEntry":
    return run_access_entry(inv)
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


# --- shared access entries ---
# One EKS access entry per node role and cluster, shared by the stacks that
# own it: each owner is a tag on the entry, and the entry goes with its last
# owner, if this provider made it (MADE_TAG); one found without that tag,
# made by EKS for a managed group or by hand, stays.

def access_entry(props):
  """Check the resource properties: (cluster name, role ARN, entry type)."""
  props = props if isinstance(props, dict) else {}
  cluster, arn, kind = props.get("ClusterName"), props.get("PrincipalArn"), props.get("Type")
  if not isinstance(cluster, str) or not CLUSTER_RE.fullmatch(cluster):
    raise Refused("ClusterName %r is not an EKS cluster name" % (cluster,))
  if not isinstance(arn, str) or not ROLE_RE.fullmatch(arn):
    raise Refused("PrincipalArn %r is not an IAM role ARN" % (arn,))
  if kind not in ENTRY_TYPES:
    raise Refused("Type must be %s, %s or %s: only node access entries are made" % ENTRY_TYPES)
  return cluster, arn, kind


def entry_path(cluster, arn):
  return "/clusters/%s/access-entries/%s" % (cluster, urllib.parse.quote(arn, safe=""))


def read_entry(inv, cluster, arn):
  """The role's access entry (accessEntryArn, type, tags), or None."""
  status, doc = inv.eks("GET", entry_path(cluster, arn))
  if status == 404:
    return None
  if status != 200:
    raise Failure("EKS DescribeAccessEntry failed, HTTP %d: %s" % (status, doc.get("message")))
  return doc["accessEntry"]


def owners_of(entry):
  return sorted(k for k in (entry.get("tags") or {}) if k.startswith(OWNER_TAG))


def hold(inv, cluster, arn, kind, owner):
  """Make the role's entry, or record owner on the one there; then look
  again, since a last owner's Delete that read the tags before this one
  was added may have removed the entry meanwhile."""
  key = OWNER_TAG + hashlib.sha256(owner.encode()).hexdigest()[:40]
  label = owner.replace("#", "/")[-256:]  # a tag value: no '#', at most 256 characters
  for _ in range(3):
    status, doc = inv.eks("POST", "/clusters/%s/access-entries" % cluster, {
        "principalArn": arn, "type": kind, "tags": {MADE_TAG: "true", key: label}})
    if status not in (200, 409):
      raise Failure("EKS CreateAccessEntry failed, HTTP %d: %s" % (status, doc.get("message")))
    entry = doc.get("accessEntry") if status == 200 else read_entry(inv, cluster, arn)
    if entry is None:
      continue  # deleted between the two calls
    if entry.get("type") != kind:
      raise Failure("%s has an access entry of type %s already, not %s" % (arn, entry.get("type"), kind))
    if key not in (entry.get("tags") or {}):
      status, doc = inv.eks("POST", "/tags/" + urllib.parse.quote(entry["accessEntryArn"], safe=""),
                            {"tags": {key: label}})
      if status not in (200, 404):
        raise Failure("EKS TagResource failed, HTTP %d: %s" % (status, doc.get("message")))
    time.sleep(max(0.0, min(SETTLE, inv.deadline - time.monotonic() - 4 * NET_TIMEOUT)))
    entry = read_entry(inv, cluster, arn)
    if entry is not None and key in (entry.get("tags") or {}):
      return "%d owner(s) recorded" % len(owners_of(entry))
    log("the entry went while it was taken: again")
  raise Failure("the access entry of %s kept disappearing" % arn)


def release(inv, cluster, arn, owner):
  """Take owner off the role's entry; the entry goes with its last owner."""
  key = OWNER_TAG + hashlib.sha256(owner.encode()).hexdigest()[:40]
  entry = read_entry(inv, cluster, arn)
  if entry is not None and key in (entry.get("tags") or {}):
    path = "/tags/%s?tagKeys=%s" % (urllib.parse.quote(entry["accessEntryArn"], safe=""),
                                    urllib.parse.quote(key, safe=""))
    status, doc = inv.eks("DELETE", path)
    if status not in (200, 404):
      raise Failure("EKS UntagResource failed, HTTP %d: %s" % (status, doc.get("message")))
    entry = read_entry(inv, cluster, arn)
  if entry is None:
    return "absent"
  owners, made = owners_of(entry), (entry.get("tags") or {}).get(MADE_TAG) == "true"
  if owners or not made:
    return "%d owner(s) recorded, the entry stays%s" % (len(owners), "" if made else " (not made here)")
  status, doc = inv.eks("DELETE", entry_path(cluster, arn))
  if status not in (200, 404):
    raise Failure("EKS DeleteAccessEntry failed, HTTP %d: %s" % (status, doc.get("message")))
  return "0 owner(s) recorded, the entry goes"


def run_access_entry(inv):
  """A Custom::NodeAccessEntry request; returns the PhysicalResourceId."""
  event = inv.event
  kind, old_id = event["RequestType"], event.get("PhysicalResourceId")
  owner = "%s#%s" % (event.get("StackId"), event.get("LogicalResourceId"))
  if kind == "Delete":
    try:
      cluster, arn, _ = access_entry(event.get("ResourceProperties"))
    except Refused as err:
      log("nothing to delete: this entry was never made (%s)" % err)
      return old_id
    inv.physical_id = old_id
    if (old_id or "").startswith(REFUSED_ID):
      return old_id
    try:  # a Delete never blocks a stack: what it cannot do is said in the log
      if inv.describe(cluster) is None:
        log("cluster %s is gone: nothing to remove" % cluster)
      else:
        log("%s: %s" % (arn, release(inv, cluster, arn, owner)))
    except Failure as err:
      log("the access entry is left as it is: %s" % err)
    return old_id
  if kind not in ("Create", "Update"):
    raise Failure("unknown RequestType %r" % kind)
  cluster, arn, entry_type = access_entry(event["ResourceProperties"])
  new_id = "access-entry/%s/%s" % (cluster, arn)
  inv.physical_id = new_id if kind == "Create" else old_id
  if kind == "Update":
    try:
      old = access_entry(event.get("OldResourceProperties"))
    except Refused:
      old = None
    if old and old[:2] != (cluster, arn):
      inv.physical_id = new_id  # another entry: CloudFormation's clean-up Deletes the old one
    elif old and old[2] != entry_type:
      raise Failure("an access entry's type cannot change (%s to %s): EKS keeps it" % (old[2], entry_type))
  if inv.describe(cluster) is None:
    raise Failure("EKS cluster %s not found in %s" % (cluster, inv.region))
  log("%s: %s" % (arn, hold(inv, cluster, arn, entry_type, owner)))
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
