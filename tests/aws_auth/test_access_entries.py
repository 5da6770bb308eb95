"""Tests of the provider's shared access entries (Custom::NodeAccessEntry):
a node role's one EKS access entry, kept while any stack that owns it
stands.

Run from the repository root:

    python3 -m unittest discover -s tests/aws_auth -v
"""
import hashlib
import hmac
import threading
import time
import unittest
import uuid
from unittest import mock

import test_provider as base  # the provider, its fake servers and helpers

provider = base.load("access_entry_provider", "access_entries.py")
role, stack_id = base.role, base.stack_id
setUpModule, tearDownModule = base.setUpModule, base.tearDownModule

SHARED = role("platform-eks-nodes")
PID = "access-entry/demo/" + SHARED


def event(kind, arn=SHARED, entry_type="EC2_LINUX", stack="nodes", cluster="demo", pid=None, old=None):
    rid = str(uuid.uuid4())
    ev = {"RequestType": kind, "RequestId": rid,
          "ResponseURL": "http://127.0.0.1:%d/cfn/%s" % (base.CFN.server_address[1], rid),
          "StackId": stack_id(stack), "LogicalResourceId": "RolePlatformEksNodesAccessEntry",
          "ResourceType": "Custom::NodeAccessEntry",
          "ResourceProperties": {"ServiceToken": "arn:aws:lambda:us-east-1:%s:function:p" % base.ACCOUNT,
                                 "ClusterName": cluster, "PrincipalArn": arn, "Type": entry_type}}
    if pid is not None:
        ev["PhysicalResourceId"] = pid
    if old is not None:
        ev["OldResourceProperties"] = old
    return ev


class AccessEntryTest(base.ProviderCase):
    module = provider
    def setUp(self):
        super().setUp()
        self.entries = base.EKS.access
        self.entries.reset()
        # The settling pause is real time; the tests keep it short.
        patcher = mock.patch.object(provider, "SETTLE", 0.2)
        patcher.start()
        self.addCleanup(patcher.stop)

    def owners(self, arn=SHARED):
        entry = self.entries.get("demo", arn)
        return None if entry is None else provider.owners_of(entry)

    def test_two_stacks_keep_a_shared_entry_until_the_last_is_deleted(self):
        body = self.assertSuccess(event("Create", stack="blue"))
        self.assertEqual(body["PhysicalResourceId"], PID)
        entry = self.entries.get("demo", SHARED)
        self.assertEqual((entry["type"], entry["tags"][provider.MADE_TAG]), ("EC2_LINUX", "true"))
        self.assertSuccess(event("Create", stack="green"))
        self.assertEqual(len(self.owners()), 2)
        self.assertSuccess(event("Delete", stack="blue", pid=PID))
        self.assertEqual(len(self.owners()), 1, "green's nodes keep their access")
        self.assertIn("1 owner(s) recorded, the entry stays", self.out.getvalue())
        self.assertSuccess(event("Delete", stack="green", pid=PID))
        self.assertIsNone(self.entries.get("demo", SHARED))
        self.assertIn("0 owner(s) recorded, the entry goes", self.out.getvalue())

    def test_events_delivered_twice_count_once(self):
        for stack in ("blue", "blue", "green"):
            self.assertSuccess(event("Create", stack=stack))
        self.assertEqual(len(self.owners()), 2)
        for _ in range(2):
            self.assertSuccess(event("Delete", stack="blue", pid=PID))
        self.assertEqual(len(self.owners()), 1)

    def test_an_entry_made_elsewhere_is_shared_and_never_deleted(self):
        # EKS makes an EC2_LINUX entry for a managed group's role, and
        # deletes it never; a person may have made one by hand.
        self.entries.seed("demo", SHARED, tags={"team": "platform"})
        self.assertSuccess(event("Create", stack="blue"))
        self.assertEqual(len(self.owners()), 1)
        self.assertSuccess(event("Delete", stack="blue", pid=PID))
        self.assertEqual(self.entries.get("demo", SHARED)["tags"], {"team": "platform"})
        self.assertIn("(not made here)", self.out.getvalue())

    def test_an_entry_of_another_type_is_not_taken(self):
        self.entries.seed("demo", SHARED, kind="EC2_WINDOWS")
        self.assertFailed(event("Create"), "has an access entry of type EC2_WINDOWS already, not EC2_LINUX")
        self.assertEqual(self.owners(), [])

    def test_only_node_entries_are_made(self):
        for props, reason in [({"Type": "STANDARD"}, "only node access entries are made"),
                              ({"PrincipalArn": "arn:aws:iam::111122223333:user/admin"}, "is not an IAM role ARN"),
                              ({"ClusterName": "no such/name"}, "is not an EKS cluster name")]:
            ev = event("Create")
            ev["ResourceProperties"].update(props)
            body = self.assertFailed(ev, reason)
            self.assertTrue(body["PhysicalResourceId"].startswith(provider.REFUSED_ID))
            # The rollback's Delete of a refused Create does nothing.
            self.assertSuccess(dict(event("Delete", pid=body["PhysicalResourceId"]),
                                    ResourceProperties=ev["ResourceProperties"]))
        self.assertEqual(self.entries.entries, {})
        self.assertFalse([c for c in self.entries.calls if c[0] != "GET"])

    def test_the_type_of_an_entry_cannot_change(self):
        self.assertSuccess(event("Create"))
        old = event("Create")["ResourceProperties"]
        self.assertFailed(event("Update", entry_type="EC2", pid=PID, old=old), "type cannot change")

    def test_an_update_to_another_role_takes_the_new_and_cloudformation_deletes_the_old(self):
        self.assertSuccess(event("Create"))
        other = role("other-nodes")
        body = self.assertSuccess(event("Update", arn=other, pid=PID, old=event("Create")["ResourceProperties"]))
        self.assertEqual(body["PhysicalResourceId"], "access-entry/demo/" + other)
        self.assertEqual(len(self.owners(other)), 1)
        self.assertSuccess(event("Delete", pid=PID))  # CloudFormation's clean-up
        self.assertIsNone(self.entries.get("demo", SHARED))

    def test_a_delete_never_blocks_the_stack(self):
        self.assertSuccess(event("Create"))
        self.assertSuccess(event("Delete", cluster="gone", pid="access-entry/gone/" + SHARED))
        with mock.patch.dict(base.EKS.clusters, {}, clear=False):
            base.EKS.clusters.pop("demo")
            self.assertSuccess(event("Delete", pid=PID))
        self.assertIn("cluster demo is gone", self.out.getvalue())

    def test_a_create_that_races_the_last_delete_keeps_the_entry(self):
        # blue is the last owner and is being deleted: it has read the tags
        # (no owner left) and is about to delete the entry when green's
        # Create finds the entry and adds itself. green looks again after
        # settling, finds the entry gone, and makes it anew.
        self.assertSuccess(event("Create", stack="blue"))
        self.entries.pause_delete = threading.Event()
        deleting = threading.Thread(target=self.invoke, args=(event("Delete", stack="blue", pid=PID),))
        deleting.start()
        while not any(c == ("DELETE", "clusters/demo/access-entries/" + SHARED) for c in self.entries.calls):
            time.sleep(0.01)
        creating = threading.Thread(target=self.invoke, args=(event("Create", stack="green"),))
        creating.start()
        while sum(1 for c in self.entries.calls if c[0] == "POST" and c[1].startswith("tags/")) < 1:
            time.sleep(0.01)
        self.entries.pause_delete.set()  # blue deletes the entry green has just taken
        self.entries.pause_delete = None
        deleting.join(30)
        creating.join(30)
        entry = self.entries.get("demo", SHARED)
        self.assertIsNotNone(entry, "green's nodes keep their access")
        self.assertEqual(len(provider.owners_of(entry)), 1)
        self.assertIn("the entry went while it was taken: again", self.out.getvalue())

    def test_many_stacks_at_once_keep_the_entry_while_one_remains(self):
        stacks = ["s%d" % i for i in range(8)]
        threads = [threading.Thread(target=self.invoke, args=(event("Create", stack=s),)) for s in stacks]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(len(self.owners()), 8)
        threads = [threading.Thread(target=self.invoke, args=(event("Delete", stack=s, pid=PID),))
                   for s in stacks[1:]]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(len(self.owners()), 1, "the last stack keeps the entry")
        self.assertSuccess(event("Delete", stack="s0", pid=PID))
        self.assertIsNone(self.entries.get("demo", SHARED))


def expected_signature(method, canonical_path, host, service, when, region="us-east-1", ak="AK", sk="SK"):
    """A header-signed request's signature, following the SigV4 spec step by step."""
    amz_date, day = when.strftime("%Y%m%dT%H%M%SZ"), when.strftime("%Y%m%d")
    scope = "/".join([day, region, service, "aws4_request"])
    canonical_request = "\n".join([method, canonical_path, "", "host:%s\nx-amz-date:%s\n" % (host, amz_date),
                                   "host;x-amz-date", hashlib.sha256(b"").hexdigest()])
    string_to_sign = "AWS4-HMAC-SHA256\n%s\n%s\n%s" % (
        amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest())
    key = ("AWS4" + sk).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()


class SignedPathTest(unittest.TestCase):
    """An access entry's path holds the role's ARN, URI-encoded; SigV4
    signs every service's path but S3's with each segment encoded again."""

    def test_an_encoded_arn_in_the_path_is_signed_encoded_twice(self):
        when = base.SUITE_TIME
        url = "https://eks.us-east-1.amazonaws.com" + provider.entry_path("demo", SHARED)
        self.assertIn("/access-entries/arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fplatform-eks-nodes", url)
        got_url, headers = provider.sigv4("GET", url, ("AK", "SK", None), "us-east-1", "eks", when)
        self.assertEqual(got_url, url, "the request goes out encoded once")
        canonical_path = "/clusters/demo/access-entries/arn%253Aaws%253Aiam%253A%253A111122223333%253Arole%252Fplatform-eks-nodes"
        expected = expected_signature("GET", canonical_path, "eks.us-east-1.amazonaws.com", "eks", when)
        self.assertTrue(headers["authorization"].endswith("Signature=" + expected))

    def test_botocore_signs_the_same(self):
        try:
            import botocore.auth
            import botocore.awsrequest
            import botocore.credentials
        except ImportError:
            if base.os.environ.get("CI"):
                raise
            self.skipTest("botocore is not installed")
        url = "https://eks.us-east-1.amazonaws.com" + provider.entry_path("demo", SHARED)
        request = botocore.awsrequest.AWSRequest(method="GET", url=url)
        botocore.auth.SigV4Auth(botocore.credentials.Credentials("AK", "SK"), "eks", "us-east-1").add_auth(request)
        when = base.datetime.datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
            tzinfo=base.datetime.timezone.utc)
        _, headers = provider.sigv4("GET", url, ("AK", "SK", None), "us-east-1", "eks", when)
        self.assertEqual(headers["authorization"], request.headers["Authorization"])


if __name__ == "__main__":
    unittest.main()
