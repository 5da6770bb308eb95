"""Tests of both providers under EKS's real behaviour: throttling, 5xx,
slow calls, races, errors that echo secrets, and every partition.

Run from the repository root:

    python3 -m unittest discover -s tests/aws_auth -v
"""
import heapq
import itertools
import json
import os
import re
import threading
import unittest
from unittest import mock

import test_access_entries as shared
import test_provider as base

aws_auth, access = base.provider, shared.provider
role, SHARED, PID = base.role, shared.SHARED, shared.PID
setUpModule, tearDownModule = base.setUpModule, base.tearDownModule
PARTITIONS = base.ROOT / "data" / "aws-partitions" / "partitions.json"


def always(fault):
    return itertools.repeat(fault)


class AccessEntryFaultTest(base.ProviderCase):
    module = access

    def setUp(self):
        super().setUp()
        self.entries = base.EKS.access
        self.entries.reset()
        self.clock = self.fake_clock()

    def owners(self):
        entry = self.entries.get("demo", SHARED)
        return None if entry is None else access.owners_of(entry)

    def test_one_throttle_or_5xx_on_each_call_of_a_delete_is_retried(self):
        for op in ("DescribeCluster", "DescribeAccessEntry", "UntagResource", "DeleteAccessEntry"):
            with self.subTest(op=op):
                self.entries.reset()
                self.assertSuccess(shared.event("Create", stack="blue"))
                base.EKS.faults[op] = iter([429, 500, 503])
                body = self.assertSuccess(shared.event("Delete", stack="blue", pid=PID))
                self.assertEqual(body["Reason"], "OK")
                self.assertIsNone(self.entries.get("demo", SHARED), "the last owner's entry goes")

    def test_one_throttle_on_a_create_is_retried(self):
        for op in ("DescribeCluster", "CreateAccessEntry", "DescribeAccessEntry", "TagResource"):
            with self.subTest(op=op):
                self.entries.reset()
                self.assertSuccess(shared.event("Create", stack="blue"))
                base.EKS.faults[op] = iter([429])
                self.assertSuccess(shared.event("Create", stack="green"))
                self.assertEqual(len(self.owners()), 2)

    def test_a_timed_out_call_is_retried(self):
        self.assertSuccess(shared.event("Create", stack="blue"))
        base.EKS.faults["UntagResource"] = iter([0.8])
        with mock.patch.object(access, "NET_TIMEOUT", 0.3):
            self.assertSuccess(shared.event("Delete", stack="blue", pid=PID))
        self.assertIn("timed out", self.out.getvalue())
        self.assertIsNone(self.entries.get("demo", SHARED))

    def test_a_delete_that_gives_up_says_what_it_left_behind(self):
        self.assertSuccess(shared.event("Create", stack="blue"))
        arn = self.entries.get("demo", SHARED)["accessEntryArn"]
        base.EKS.faults["UntagResource"] = always(503)
        body = self.assertSuccess(shared.event("Delete", stack="blue", pid=PID))
        self.assertIn("gave up, leaving behind the owner tag eksynth.io/owner/", body["Reason"])
        self.assertIn("aws eks untag-resource --resource-arn %s" % arn, body["Reason"])
        self.assertIn("ServiceUnavailableException", body["Reason"])
        base.EKS.faults.clear()
        self.assertSuccess(shared.event("Create", stack="blue"))
        base.EKS.faults["DeleteAccessEntry"] = always(500)
        body = self.assertSuccess(shared.event("Delete", stack="blue", pid=PID))
        self.assertIn("the access entry of %s, made here and owned by no stack" % SHARED, body["Reason"])
        self.assertIn("aws eks delete-access-entry --cluster-name demo --principal-arn %s" % SHARED,
                      body["Reason"])

    def test_a_delete_answers_one_way_for_network_and_http_errors(self):
        self.assertSuccess(shared.event("Create", stack="blue"))
        with mock.patch.dict(os.environ, {"AWS_ENDPOINT_URL_EKS": base.UNREACHABLE}):
            network = self.assertSuccess(shared.event("Delete", stack="blue", pid=PID))
        base.EKS.faults["DescribeCluster"] = always((403, "AccessDeniedException", "not authorized"))
        denied = self.assertSuccess(shared.event("Delete", stack="blue", pid=PID))
        for body, cause in ((network, "Connection refused"), (denied, "AccessDeniedException")):
            self.assertTrue(body["Reason"].startswith(
                "gave up, leaving behind this resource's owner tag on the access entry of %s" % SHARED))
            self.assertIn(cause, body["Reason"])
        self.assertEqual(len(self.owners()), 1, "the tag is left, and said to be")

    def test_the_49th_owner_is_the_last(self):
        tags = {access.MADE_TAG: "true"}
        tags.update({access.OWNER_TAG + "%040d" % k: "s" for k in range(49)})
        self.entries.seed("demo", SHARED, tags=tags)
        body = self.assertFailed(shared.event("Create", stack="blue"), "at most 49 owner stacks")
        self.assertIn("holds 50 tags (49 owner stacks)", body["Reason"])
        self.assertEqual(self.entries.get("demo", SHARED)["tags"], tags)

    def test_the_access_entry_path_needs_no_endpoint_or_ca(self):
        self.assertSuccess(shared.event("Create", cluster="bare"))
        self.assertIsNotNone(self.entries.get("bare", SHARED))
        body = self.assertSuccess(shared.event("Delete", cluster="bare", pid="access-entry/bare/" + SHARED))
        self.assertEqual(body["Reason"], "OK")
        self.assertIsNone(self.entries.get("bare", SHARED))


# What AWS answers a request whose signature does not match: the canonical
# request quoted, with the session token, and the credential and signature.
def signature_mismatch():
    return (403, "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. "
            "Authorization=AWS4-HMAC-SHA256 Credential=%s/20260101/us-east-1/eks/aws4_request, "
            "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=%s\n"
            "The Canonical String for this request should have been\n'GET\n/clusters/demo\n\n"
            "host:eks.us-east-1.amazonaws.com\nx-amz-date:20260101T000000Z\nx-amz-security-token:%s\n\n"
            "host;x-amz-date;x-amz-security-token\ne3b0c442'" % (base.ACCESS_KEY, "ab" * 32, base.SESSION_TOKEN))


class RedactionTest(base.ProviderCase):
    SECRETS = (base.ACCESS_KEY, base.SECRET_KEY, base.SESSION_TOKEN, "ab" * 32, "k8s-aws-v1.")

    def assertNoSecret(self, body):
        for secret in self.SECRETS:
            self.assertNotIn(secret, body["Reason"])
            self.assertNotIn(secret, self.out.getvalue())

    def test_an_echoed_signing_error_is_redacted_in_both_providers(self):
        for module, ev in ((aws_auth, base.event("Create", role("nodes"))), (access, shared.event("Create"))):
            with self.subTest(provider=module.WHO), mock.patch.object(type(self), "module", module):
                base.EKS.faults["DescribeCluster"] = iter([signature_mismatch()])
                body = self.assertFailed(ev, "InvalidSignatureException")
                self.assertIn("x-amz-security-token:<redacted>", body["Reason"])
                self.assertNoSecret(body)

    def test_an_api_server_that_echoes_the_bearer_token_is_redacted(self):
        real = aws_auth.http

        def echoing(method, url, headers, *args, **kwargs):
            if "/api/v1/" not in url:
                return real(method, url, headers, *args, **kwargs)
            return 401, json.dumps({"message": "token %s refused" % headers["Authorization"]}).encode(), {}
        with mock.patch.object(aws_auth, "http", echoing):
            body = self.assertFailed(base.event("Create", role("nodes")), "refused")
        self.assertNoSecret(body)


class PartitionTest(unittest.TestCase):
    """The DNS suffix of every region the SDKs' partition data knows."""

    def test_every_partition_s_regions_get_its_dns_suffix_for_eks_and_sts(self):
        data = json.loads(PARTITIONS.read_text())
        names = {p["id"] for p in data["partitions"]}
        self.assertTrue({"aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc", "aws-cn"} <= names)
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
        for partition in data["partitions"]:
            suffix = partition["outputs"]["dnsSuffix"]
            for region in partition["regions"]:
                if region.endswith("-global"):
                    continue
                with self.subTest(region=region), mock.patch.dict(os.environ, env, clear=True):
                    self.assertEqual(access.eks_endpoint(region), "https://eks.%s.%s" % (region, suffix))
                    token = aws_auth.eks_token("c", region, ("AK", "SK", None), base.SUITE_TIME)
                    url = base.base64.urlsafe_b64decode(token[11:] + "=" * (-len(token[11:]) % 4)).decode()
                    self.assertTrue(url.startswith("https://sts.%s.%s/?" % (region, suffix)), url)

    def test_a_region_no_partition_knows_is_in_the_first(self):
        self.assertEqual(access.domain("xx-future-1"), "amazonaws.com")

    def test_the_embedded_table_is_the_vendored_data(self):
        data = json.loads(PARTITIONS.read_text())
        want = tuple((p["regionRegex"], p["outputs"]["dnsSuffix"],
                      tuple(r for r in p["regions"] if not re.match(p["regionRegex"], r)))
                     for p in data["partitions"])
        self.assertEqual(access.PARTITIONS, want, "run data/aws-partitions/refresh.py")


class VirtualTime:
    """One virtual clock for threads that each run a provider: a thread runs
    until it waits (a sleep, or a held call), and the earliest wait ends
    next, so the fake EKS sees the calls in virtual time order."""

    def __init__(self):
        self.now, self.cv, self.events, self.seq = 0.0, threading.Condition(), [], itertools.count()
        self.running, self.current = 0, None

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.wait_until(self.now + seconds)

    def wait_until(self, when):
        with self.cv:
            token = object()
            heapq.heappush(self.events, (when, next(self.seq), token))
            self.running -= 1
            self.cv.notify_all()
            while self.current is not token:
                self.cv.wait()

    def spawn(self, fn):
        with self.cv:
            self.running += 1

        def body():
            try:
                fn()
            finally:
                with self.cv:
                    self.running -= 1
                    self.cv.notify_all()
        thread = threading.Thread(target=body)
        thread.start()
        return thread

    def run(self):
        with self.cv:
            while True:
                while self.running:
                    self.cv.wait()
                if not self.events:
                    return
                when, _, self.current = heapq.heappop(self.events)
                self.now = max(self.now, when)
                self.running += 1
                self.cv.notify_all()


class VirtualContext:
    def __init__(self, clock, seconds):
        self.clock, self.end = clock, clock.now + seconds

    def get_remaining_time_in_millis(self):
        return int((self.end - self.clock.now) * 1000)


class RaceWindowTest(base.ProviderCase):
    """The last owner's Delete against a Create, each EKS call held as long
    as the provider's timeout permits: a read is answered as it arrives, a
    write lands at the end of its timeout (the worst case for the race)."""
    module = access

    def race(self, offset, seconds=300.0):
        vt, real, eks = VirtualTime(), access.http, base.eks_url()

        def held(method, url, headers, body=None, ctx=None, timeout=access.NET_TIMEOUT):
            if not url.startswith(eks):
                return real(method, url, headers, body, ctx, timeout)
            end = vt.now + timeout - 0.001
            if method == "GET":
                vt.wait_until(vt.now)
                answer = real(method, url, headers, body, ctx, timeout)
                vt.wait_until(end)
            else:
                vt.wait_until(end)
                answer = real(method, url, headers, body, ctx, timeout)
            return answer
        self.entries.reset()
        tags = {access.MADE_TAG: "true"}
        owner = "%s#%s" % (base.stack_id("blue"), "RolePlatformEksNodesAccessEntry")
        tags[access.OWNER_TAG + access.hashlib.sha256(owner.encode()).hexdigest()[:40]] = "blue"
        self.entries.seed("demo", SHARED, tags=tags)
        delete, create = shared.event("Delete", stack="blue", pid=PID), shared.event("Create", stack="green")

        def later(ev, start):
            def go():
                vt.sleep(start)
                access.handler(ev, VirtualContext(vt, seconds))
            return go
        with mock.patch.object(access, "time", vt), mock.patch.object(access, "http", held), \
                mock.patch.object(access.threading, "Timer", InertTimer):
            threads = [vt.spawn(later(delete, max(0.0, -offset))), vt.spawn(later(create, max(0.0, offset)))]
            vt.run()
            for t in threads:
                t.join(10)
        return base.responses(create)[0]["body"]

    def setUp(self):
        super().setUp()
        self.entries = base.EKS.access

    def test_a_create_answered_success_keeps_its_entry_whatever_the_timing(self):
        for tenths in range(-300, 301, 5):
            offset = tenths / 10.0
            with self.subTest(offset=offset):
                body = self.race(offset)
                if body["Status"] == "SUCCESS":
                    entry = self.entries.get("demo", SHARED)
                    self.assertIsNotNone(entry, "green answered SUCCESS, and its entry was deleted")
                    self.assertEqual(len(access.owners_of(entry)), 1)

    def test_a_create_with_little_time_left_does_not_settle_less(self):
        for seconds in (45.0, 60.0, 80.0):
            for offset in (-6.0, -4.0):
                with self.subTest(seconds=seconds, offset=offset):
                    body = self.race(offset, seconds)
                    if body["Status"] == "SUCCESS":
                        self.assertIsNotNone(self.entries.get("demo", SHARED))


class InertTimer:
    """The watchdog, in virtual time never due."""

    def __init__(self, *args, **kwargs):
        self.daemon = True

    def start(self):
        pass

    def cancel(self):
        pass


if __name__ == "__main__":
    unittest.main()
