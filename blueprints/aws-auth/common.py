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
import random
import re
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPException

REFUSED_ID = "aws-auth-refused/"  # PhysicalResourceId of a refused Create: its Delete does nothing
NET_TIMEOUT = 10.0  # seconds, the most one network call may take
# Retries as the AWS SDKs' standard mode makes them (botocore,
# botocore/retries/standard.py): throttling error codes, transient ones, HTTP
# 500/502/503/504 and connection errors and timeouts; a delay of
# random() * min(scale * 2 ** (attempt - 1), 20 s), scale 1 s after
# throttling and 0.05 s otherwise. HTTP 429 counts as throttling, as in
# botocore's legacy mode (data/_retry.json) and for the Kubernetes API.
THROTTLING = {"Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
              "TooManyRequestsException", "ProvisionedThroughputExceededException",
              "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
              "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
              "EC2ThrottledException"}
TRANSIENT = {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"}
RETRY_ATTEMPTS = 8  # standard mode makes 3; a Delete that gives up leaves something behind
MAX_BACKOFF = 20.0
CLUSTER_RE = re.compile(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")
ROLE_RE = re.compile(r"(arn:aws[a-z-]*:iam::[0-9]{12}:role/)(?:[\x21-\x7e]*/)?([\w+=,.@-]{1,64})", re.A)


class Refused(Exception):
  """Refused before anything was written."""


class Failure(Exception):
  """Failed, for a reason CloudFormation shows."""


class Transient(Failure):
  """Failed for a reason a retry may not meet (throttling, 5xx, network)."""


SECRETS = []  # this invocation's credentials and token: never logged, never in a Reason
REDACT = [re.compile(p, re.I) for p in (
    r"((?:x-amz-security-token|x-amz-signature|signature|credential|x-amz-credential)[\"']?\s*[:=]\s*[\"']?)"
    r"[^\s&,;'\"]+",
    r"(authorization[\"']?\s*[:=]\s*[\"']?)[^\n'\"]+", r"(bearer\s+)[^\s'\"]+",
    r"()\b(?:AKIA|ASIA|AIDA|AROA|ABIA|ACCA)[A-Z0-9]{12,}", r"()k8s-aws-v1\.[\w-]+")]


def redact(text):
  """text without what an AWS or Kubernetes error may echo: credentials,
  session tokens, signatures, bearer tokens."""
  text = str(text)
  for secret in SECRETS:
    for form in {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote(secret)}:
      text = text.replace(form, "<redacted>")
  for pattern in REDACT:
    text = pattern.sub(lambda m: m.group(1) + "<redacted>", text)
  return text


def log(msg):  # redacted: an error may quote a token, a credential or a signature
  print("[%s] %s" % (WHO, redact(msg)), flush=True)


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


# The partitions of the AWS SDKs' partition data (botocore's
# data/partitions.json, vendored in eksynth's data/aws-partitions/): regex,
# DNS suffix, and the regions a partition lists that its regex does not match.
# --- generated by data/aws-partitions/refresh.py ---
PARTITIONS = (
    (r"^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$", "amazonaws.com", ("aws-global",)),
    (r"^cn\-\w+\-\d+$", "amazonaws.com.cn", ("aws-cn-global",)),
    (r"^eusc\-(de)\-\w+\-\d+$", "amazonaws.eu", ()),
    (r"^us\-iso\-\w+\-\d+$", "c2s.ic.gov", ("aws-iso-global",)),
    (r"^us\-isob\-\w+\-\d+$", "sc2s.sgov.gov", ("aws-iso-b-global",)),
    (r"^eu\-isoe\-\w+\-\d+$", "cloud.adc-e.uk", ("aws-iso-e-global",)),
    (r"^us\-isof\-\w+\-\d+$", "csp.hci.ic.gov", ("aws-iso-f-global",)),
    (r"^us\-gov\-\w+\-\d+$", "amazonaws.com", ("aws-us-gov-global",)),
)
# --- end of generated ---


def domain(region):
  """The region's DNS suffix as the SDKs find its partition: a region a
  partition lists, else the first whose regex matches, else the first."""
  for rx, suffix, listed in PARTITIONS:
    if region in listed:
      return suffix
  for rx, suffix, listed in PARTITIONS:
    if re.match(rx, region, re.A):
      return suffix
  return PARTITIONS[0][1]


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
  """One HTTP call: (status, body bytes, headers), whatever the status."""
  if body is not None and not isinstance(body, bytes):
    body = json.dumps(body).encode()
  try:
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
      return resp.status, resp.read(), resp.headers
  except urllib.error.HTTPError as err:
    return err.code, err.read(), err.headers


def why(status, raw):
  return "HTTP %d: %s" % (status, " ".join(redact(raw.decode("utf-8", "replace")).split())[:400])


def json_doc(raw):
  """An answer's JSON object, or {} when it holds none."""
  try:
    doc = json.loads(raw) if raw else {}
  except ValueError:
    doc = {}
  return doc if isinstance(doc, dict) else {}


def error_code(doc, headers):
  """The error code of an AWS answer, read as botocore's REST-JSON parser
  reads it (x-amzn-ErrorType, else code or __type), or the Kubernetes reason."""
  code = (headers or {}).get("x-amzn-ErrorType") or doc.get("code") or doc.get("__type") or doc.get("reason")
  return str(code or "").split(":")[0].split("#")[-1]


def retryable(status, raw, headers):
  """'throttling', 'transient', or None (an answer to keep)."""
  code = error_code(json_doc(raw), headers) if status >= 400 else ""
  if status == 429 or code in THROTTLING:
    return "throttling"
  if status in (500, 502, 503, 504) or code in TRANSIENT:
    return "transient"
  return None


def retrying(inv, what, attempt, cap=NET_TIMEOUT, attempts=RETRY_ATTEMPTS):
  """attempt(timeout) -> (status, raw, headers), made again after throttling,
  a 5xx, a timeout or a connection error, with the standard mode's backoff
  and never past the watchdog; Transient when it gives up on such an error.
  inv.sent is when the attempt that answered started."""
  for n in range(1, attempts + 1):
    inv.sent = time.monotonic()
    try:
      status, raw, headers = attempt(inv.timeout(cap))
      kind, err = retryable(status, raw, headers), why(status, raw)
    except (OSError, HTTPException) as e:  # refused, DNS, reset, timed out
      if isinstance(getattr(e, "reason", e), ssl.SSLCertVerificationError):
        raise  # trusting only the cluster's CA: no retry makes it trusted
      kind, err = "transient", "%s: %s" % (type(e).__name__, getattr(e, "reason", e))
    if kind is None:
      return status, raw, headers
    backoff(inv, n, kind, "%s: %s" % (what, err), attempts)
  raise Transient("%s failed after %d attempts, %s" % (what, attempts, err))


def backoff(inv, n, kind, err, attempts=RETRY_ATTEMPTS):
  """Wait before attempt n + 1, or give up (Transient) when it would be the
  last or would run past the watchdog."""
  delay = random.random() * min((1.0 if kind == "throttling" else 0.05) * 2 ** (n - 1), MAX_BACKOFF)
  if n >= attempts:
    return
  if time.monotonic() + delay + 1.0 > inv.watchdog_at:
    raise Transient("%s; no time left for another attempt after %d" % (err, n))
  log("%s (%s), attempt %d: again in %.2f s" % (err, kind, n, delay))
  time.sleep(delay)


class Invocation:
  """One request: its deadline, the cluster, and whether CloudFormation has
  had its one answer (from the handler or from the watchdog). left says
  what a Delete that gives up leaves behind."""

  def __init__(self, event, context):
    self.event, self.lock, self.answered, self.physical_id = event, threading.Lock(), False, None
    left = context.get_remaining_time_in_millis() / 1000.0
    self.deadline = time.monotonic() + left
    self.watchdog_delay = max(0.1, left - min(5.0, left / 4))
    self.watchdog_at = time.monotonic() + self.watchdog_delay
    self.left, self.sent = "nothing", 0.0

  def timeout(self, cap=NET_TIMEOUT):
    """Timeout of the next network call; none starts after the answer."""
    left = self.deadline - time.monotonic()
    if self.answered or left < 0.2:
      raise Failure("out of time")
    return min(NET_TIMEOUT, cap, left)

  def eks(self, what, method, path, body=None, cap=NET_TIMEOUT, attempts=RETRY_ATTEMPTS):
    """A call to EKS's API, signed anew for each attempt: (status, the JSON
    answer or {}); error answers carry their message."""
    data = json.dumps(body).encode() if body is not None else None

    def attempt(timeout):
      url, hdrs = sigv4(method, eks_endpoint(self.region) + path, self.creds, self.region, "eks", utcnow(),
                        {"Content-Type": "application/json"} if data else None,
                        payload_hash=hashlib.sha256(data or b"").hexdigest())
      return http(method, url, hdrs, data, timeout=timeout)
    status, raw, headers = retrying(self, "EKS " + what, attempt, cap, attempts)
    log("eks:%s %s -> %d" % (what, urllib.parse.unquote(path.split("?")[0]), status))
    doc = json_doc(raw)
    if status >= 300:
      doc["message"] = "%s, %s" % (error_code(doc, headers) or "error", why(status, raw))
    return status, doc

  def describe(self, name):
    """EKS DescribeCluster: the cluster, or None when there is none."""
    env = os.environ.get
    self.name, self.region, self.minted = name, env("AWS_REGION"), -99.0
    self.creds = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN"))
    SECRETS[:] = [c for c in self.creds if c]
    if not (all(self.creds[:2]) and self.region):
      raise Failure("no AWS credentials or region in the environment")
    status, doc = self.eks("DescribeCluster", "GET", "/clusters/" + name)
    if status == 404:
      return None
    if status != 200 or not isinstance(doc.get("cluster"), dict):
      raise Failure("EKS DescribeCluster %s failed, %s" % (name, doc.get("message")))
    return doc["cluster"]

  def connect(self, cluster):
    """Trust only the cluster's CA, at its endpoint (the aws-auth path)."""
    try:
      self.api = cluster["endpoint"].rstrip("/")
      self.ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificateAuthority"]["data"]).decode())
    except (KeyError, TypeError, AttributeError, ValueError) as err:
      raise Failure("EKS DescribeCluster %s gave no usable endpoint and CA (%s: %s)" % (
          self.name, type(err).__name__, err))

  def kube(self, method, path, body=None):
    """A call to the cluster's API server, retried as EKS's are."""
    def attempt(timeout):
      if time.monotonic() - self.minted > 30:  # the token's presigned URL lives 60 s
        self.token, self.minted = eks_token(self.name, self.region, self.creds, utcnow()), time.monotonic()
        SECRETS.append(self.token)
      hdrs = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
      hdrs.update({"Content-Type": "application/json"} if body else {})
      return http(method, self.api + path, hdrs, body, self.ctx, timeout)
    status, raw, _ = retrying(self, "%s %s" % (method, path), attempt)
    log("%s %s -> %d" % (method, path, status))
    return status, raw


def answer(inv, status, reason, pid):
  """PUT the one response of this invocation to CloudFormation."""
  with inv.lock:
    if inv.answered:
      return
    inv.answered = True
  event, reason = inv.event, redact(reason)
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


def gave_up(inv, err):
  """The Reason of a Delete that gives up: it never blocks the stack, and
  says what it leaves behind."""
  return "gave up, leaving behind %s: %s" % (inv.left, err)


def handler(event, context):
  inv = Invocation(event, context)
  delete = event.get("RequestType") == "Delete"
  timer = threading.Timer(inv.watchdog_delay, lambda: answer(
      inv, "SUCCESS" if delete else "FAILED", gave_up(inv, "timed out before the Lambda deadline")
      if delete else "timed out before the Lambda deadline", inv.physical_id))
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
    # One rule for a Delete, whatever failed (HTTP, network, time): success,
    # with what is left behind in its Reason.
    answer(inv, "SUCCESS" if delete else "FAILED", gave_up(inv, reason) if delete else reason,
           inv.physical_id or event.get("PhysicalResourceId"))
  finally:
    timer.cancel()
