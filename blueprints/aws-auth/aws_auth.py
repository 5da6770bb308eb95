

# === Custom::AwsAuth: maps one node IAM role in the cluster's
# kube-system/aws-auth ConfigMap; the last owner's Delete removes it. ===

import bisect
import collections

WHO = "aws-auth"
USERNAME = "system:node:{{EC2PrivateDNSName}}"
USERNAMES = (USERNAME, "system:node:{{SessionName}}")  # the second: nodes named by instance ID
GROUPS = ("system:bootstrappers", "system:nodes", "eks:kube-proxy-windows")  # the first two required
CM_LIST = "/api/v1/namespaces/kube-system/configmaps"
CM_PATH = CM_LIST + "/aws-auth"
OWNERS = "eksynth.io/aws-auth-owners"  # annotation: {role ARN: [StackId#LogicalResourceId]}
UNKNOWN = "unknown"  # the owner of an entry found without owners
MAX_ATTEMPTS = 30  # read-modify-write attempts while others write aws-auth too (409)


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
    inv.left = "this resource's mapping of %s in aws-auth, if it has one, and it among its owners (%s)" % (
        entry["rolearn"], OWNERS)
    cluster_doc = inv.describe(cluster)
    if cluster_doc is None:
      log("cluster %s is gone: nothing to remove" % cluster)
    else:
      inv.connect(cluster_doc)
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
  cluster_doc = inv.describe(cluster)
  if cluster_doc is None:
    raise Failure("EKS cluster %s not found in %s" % (cluster, inv.region))
  inv.connect(cluster_doc)
  log("%s: %s" % (entry["rolearn"], modify(inv, old, entry)))
  return inv.physical_id
