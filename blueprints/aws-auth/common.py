"""The common half of eksynth's custom resource providers: SigV4, HTTP, EKS
DescribeCluster, and one answer to CloudFormation per request.  A provider is
this file followed by aws_auth.py (Custom::AwsAuth) or access_entries.py
(Custom::NodeAccessEntry), which define WHO and run(inv).  Standard library
only.  See blueprints/aws-auth/README.md in eksynth."""
import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

REFUSED_ID = "aws-auth-refused/"  # PhysicalResourceId of a refused Create: its Delete does nothing
NET_TIMEOUT = 10.0  # seconds, the most one network call may take
CLUSTER_RE = re.compile(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")
ROLE_RE = re.compile(r"(arn:aws[a-z-]*:iam::[0-9]{12}:role/)(?:[\x21-\x7e]*/)?([\w+=,.@-]{1,64})", re.A)


class Refused(Exception):
  """Refused before anything was written."""


class Failure(Exception):
  """Failed, for a reason CloudFormation shows."""


def log(msg):  # never given a token, a credential or the ResponseURL
  print("[%s] %s" % (WHO, msg), flush=True)


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

  def kube(self, method, path, body=None):
    """One call to the cluster's API server."""
    if time.monotonic() - self.minted > 30:  # the token's presigned URL lives 60 s
      self.token, self.minted = eks_token(self.name, self.region, self.creds, utcnow()), time.monotonic()
    hdrs = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
    hdrs.update({"Content-Type": "application/json"} if body else {})
    status, raw = http(method, self.api + path, hdrs, body, self.ctx, self.timeout())
    log("%s %s -> %d" % (method, path, status))
    return status, raw


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
