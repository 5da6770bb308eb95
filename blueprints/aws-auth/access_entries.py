

# === Custom::NodeAccessEntry: one node role's EKS access entry, shared by
# the stacks that own it; the last owner's Delete removes it. ===

WHO = "access-entry"
ENTRY_TYPES = ("EC2_LINUX", "EC2_WINDOWS", "EC2")  # node access entries: no groups, no policies
OWNER_TAG = "eksynth.io/owner/"  # + a hash of StackId#LogicalResourceId: one tag per owner of an entry
MADE_TAG = "eksynth.io/made"  # on an entry this provider created, which its last owner's Delete removes
MAX_TAGS = 50  # EKS's tags on a resource (aws: ones not counted): one is MADE_TAG, so 49 owners at most
# The race a Create settles against: a last owner's Delete that read the
# entry without this owner's tag, then deletes it. Its DeleteAccessEntry
# lands at most WINDOW after that read was sent (the read and the delete
# share it), and a Create looks again SETTLE after its tag landed; so the
# look comes after any such delete.
WINDOW = 10.0
SETTLE = 12.0


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


def read_entry(inv, cluster, arn, cap=NET_TIMEOUT):
  """The role's access entry (accessEntryArn, type, tags), or None."""
  status, doc = inv.eks("DescribeAccessEntry", "GET", entry_path(cluster, arn), cap=cap)
  if status == 404:
    return None
  if status != 200:
    raise Failure("EKS DescribeAccessEntry failed, %s" % doc.get("message"))
  return doc["accessEntry"]


def owners_of(entry):
  return sorted(k for k in (entry.get("tags") or {}) if k.startswith(OWNER_TAG))


def tag_path(entry):
  return "/tags/" + urllib.parse.quote(entry["accessEntryArn"], safe="")


def hold(inv, cluster, arn, kind, owner):
  """Make the role's entry, or record owner on the one there; then look
  again, since a last owner's Delete that read the tags before this one
  was added may have removed the entry meanwhile."""
  key = OWNER_TAG + hashlib.sha256(owner.encode()).hexdigest()[:40]
  label = owner.replace("#", "/")[-256:]  # a tag value: no '#', at most 256 characters
  for _ in range(3):
    status, doc = inv.eks("CreateAccessEntry", "POST", "/clusters/%s/access-entries" % cluster, {
        "principalArn": arn, "type": kind, "tags": {MADE_TAG: "true", key: label}})
    if status not in (200, 409):
      raise Failure("EKS CreateAccessEntry failed, %s" % doc.get("message"))
    entry = doc.get("accessEntry") if status == 200 else read_entry(inv, cluster, arn)
    if entry is None:
      continue  # deleted between the two calls
    if entry.get("type") != kind:
      raise Failure("%s has an access entry of type %s already, not %s" % (arn, entry.get("type"), kind))
    tags = entry.get("tags") or {}
    if key not in tags:
      counted = [k for k in tags if not k.lower().startswith("aws:")]
      if len(counted) >= MAX_TAGS:
        raise Failure("the access entry of %s holds %d tags (%d owner stacks), EKS's most: an entry "
                      "holds at most %d owner stacks (EKS allows %d tags, one is %s, others' tags count "
                      "too); nothing was changed" % (arn, len(counted), len(owners_of(entry)),
                                                     MAX_TAGS - 1, MAX_TAGS, MADE_TAG))
      status, doc = inv.eks("TagResource", "POST", tag_path(entry), {"tags": {key: label}})
      if status not in (200, 404):
        raise Failure("EKS TagResource failed, %s" % doc.get("message"))
    if time.monotonic() + SETTLE + 2 * NET_TIMEOUT > inv.watchdog_at:
      raise Failure("too little time left to look at the entry again after %.0f s" % SETTLE)
    time.sleep(SETTLE)
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
    inv.left = "the owner tag %s on the access entry of %s (aws eks untag-resource --resource-arn %s " \
               "--tag-keys %s)" % (key, arn, entry["accessEntryArn"], key)
    path = "%s?tagKeys=%s" % (tag_path(entry), urllib.parse.quote(key, safe=""))
    status, doc = inv.eks("UntagResource", "DELETE", path)
    if status not in (200, 404):
      raise Failure("EKS UntagResource failed, %s" % doc.get("message"))
  for n in range(1, RETRY_ATTEMPTS + 1):
    # The last read and the delete it decides share WINDOW (hold() settles
    # longer than that); a delete that fails reads again.
    entry = read_entry(inv, cluster, arn, cap=WINDOW / 2)
    sent = inv.sent
    if entry is None:
      return "absent"
    owners, made = owners_of(entry), (entry.get("tags") or {}).get(MADE_TAG) == "true"
    if owners or not made:
      return "%d owner(s) recorded, the entry stays%s" % (len(owners), "" if made else " (not made here)")
    inv.left = "the access entry of %s, made here and owned by no stack (aws eks delete-access-entry " \
               "--cluster-name %s --principal-arn %s)" % (arn, cluster, arn)
    cap = sent + WINDOW - time.monotonic()
    if cap >= 1.0:
      try:
        status, doc = inv.eks("DeleteAccessEntry", "DELETE", entry_path(cluster, arn), cap=cap, attempts=1)
      except Transient as err:
        backoff(inv, n, "transient", str(err))
        continue
      if status not in (200, 404):
        raise Failure("EKS DeleteAccessEntry failed, %s" % doc.get("message"))
      return "0 owner(s) recorded, the entry goes"
  raise Transient("EKS DeleteAccessEntry failed %d times" % RETRY_ATTEMPTS)


def run(inv):
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
    # What fails is answered as every Delete's failure is (handler): success,
    # and what is left behind in the Reason.
    inv.left = "this resource's owner tag on the access entry of %s, if it has one" % arn
    if inv.describe(cluster) is None:
      log("cluster %s is gone: nothing to remove" % cluster)
    else:
      log("%s: %s" % (arn, release(inv, cluster, arn, owner)))
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
