"""Tests of the aws-auth provider's owners: a role that several stacks map
keeps its mapRoles entry until the last of them is deleted.

Run from the repository root:

    python3 -m unittest discover -s tests/aws_auth -v
"""
import sys
import threading
import time

import test_provider as base  # the provider, its fake servers and helpers

entries, entry, role, event, owner = base.entries, base.entry, base.role, base.event, base.owner
OWNERS, UNKNOWN = base.OWNERS, "unknown"
FOREIGN_MAP_ROLES = base.FOREIGN_MAP_ROLES
setUpModule, tearDownModule = base.setUpModule, base.tearDownModule

SHARED = role("shared")
PID = "aws-auth/demo/" + SHARED
# Another role's owners, recorded by someone else: kept as they are.
FOREIGN_OWNERS = {role("eksctl-prod-nodegroup-NodeInstanceRole-1ABC"): ["arn:aws:cloudformation:x#Y"]}


class OwnersTest(base.ProviderCase):
    def mapped(self, arn=SHARED):
        """How many times arn's node entry is in mapRoles."""
        return entries(base.KUBE.state.data()["mapRoles"]).count(entry(arn))

    def test_two_stacks_keep_a_shared_entry_until_the_last_is_deleted(self):
        self.seed_foreign(owners=FOREIGN_OWNERS)
        self.assertSuccess(event("Create", SHARED, stack="blue"))
        self.assertSuccess(event("Create", SHARED, stack="green"))
        self.assertEqual(self.mapped(), 1, "one entry, not a duplicate")
        self.assertEqual(base.KUBE.state.owners(), dict(FOREIGN_OWNERS, **{SHARED: [owner("blue"), owner("green")]}))
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
        self.assertEqual(self.mapped(), 1, "green's nodes keep their access")
        self.assertIn("%s: 1 owner(s) recorded\n" % SHARED, self.out.getvalue())
        self.assertEqual(base.KUBE.state.owners(), dict(FOREIGN_OWNERS, **{SHARED: [owner("green")]}))
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="green"))
        self.assertEqual(self.mapped(), 0)
        self.assertIn("%s: 0 owner(s) recorded, the entry goes\n" % SHARED, self.out.getvalue())
        self.assertEqual(base.KUBE.state.owners(), FOREIGN_OWNERS)
        data = base.KUBE.state.data()
        self.assertEqual(data["mapRoles"], FOREIGN_MAP_ROLES)  # byte for byte
        self.assertForeignIntact(data)

    def test_events_delivered_twice_count_once(self):
        # Lambda may deliver an event twice: the provider sees the same
        # stack and resource again.
        for stack in ("blue", "blue", "green"):
            self.assertSuccess(event("Create", SHARED, stack=stack))
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("blue"), owner("green")]})
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
        writes = base.KUBE.state.writes
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
        self.assertEqual(base.KUBE.state.writes, writes, "the second delivery writes nothing")
        self.assertEqual(self.mapped(), 1)
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("green")]})
        for _ in range(2):
            self.assertSuccess(event("Delete", SHARED, pid=PID, stack="green"))
        self.assertEqual(self.mapped(), 0)
        self.assertIsNone(base.KUBE.state.owners())

    def test_an_entry_found_without_owners_is_never_removed(self):
        # Written by hand, by another tool or by a provider that recorded no
        # owners: whoever wrote it may rely on it.
        ours = base.provider.emit_entries([entry(SHARED)])
        self.seed_foreign(FOREIGN_MAP_ROLES + ours)
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
        self.assertEqual(base.KUBE.state.writes, 0)
        self.assertSuccess(event("Create", SHARED, stack="blue"))
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("blue"), UNKNOWN]})
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
        self.assertEqual(base.KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES + ours)
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [UNKNOWN]})

    def test_owners_of_an_entry_removed_by_hand_are_not_kept(self):
        self.seed_foreign(owners={SHARED: [owner("gone")]})
        self.assertSuccess(event("Create", SHARED, stack="blue"))
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("blue")]})
        self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
        self.assertEqual(base.KUBE.state.data()["mapRoles"], FOREIGN_MAP_ROLES)

    def test_an_update_to_another_role_moves_only_its_own_ownership(self):
        self.assertSuccess(event("Create", SHARED, stack="blue"))
        self.assertSuccess(event("Create", SHARED, stack="green"))
        old = event("Create", SHARED)["ResourceProperties"]
        self.assertSuccess(event("Update", role("own"), old=old, pid=PID, stack="green"))
        self.assertEqual((self.mapped(), self.mapped(role("own"))), (1, 1))
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("blue")], role("own"): [owner("green")]})
        self.assertSuccess(event("Update", SHARED, old=event("Create", role("own"))["ResourceProperties"],
                                 pid=PID, stack="green"))  # and back, as a rollback does
        self.assertEqual((self.mapped(), self.mapped(role("own"))), (1, 0))
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("blue"), owner("green")]})

    def test_an_update_of_groups_is_refused_while_another_stack_maps_the_role(self):
        self.assertSuccess(event("Create", SHARED, stack="blue"))
        self.assertSuccess(event("Create", SHARED, stack="green"))
        old = event("Create", SHARED)["ResourceProperties"]
        windows = base.NODE_GROUPS + ["eks:kube-proxy-windows"]
        self.assertFailed(event("Update", SHARED, windows, old=old, pid=PID, stack="green"), "already mapped")
        self.assertEqual(self.mapped(), 1)
        self.assertEqual(base.KUBE.state.owners(), {SHARED: [owner("blue"), owner("green")]})

    def test_an_owners_annotation_it_cannot_read_is_left_alone(self):
        for bad in ("{not json", '["a"]', '{"arn": "a"}', '{"arn": [1]}'):
            with self.subTest(bad):
                base.KUBE.state.reset()
                self.seed_foreign(FOREIGN_MAP_ROLES + base.provider.emit_entries([entry(SHARED)]))
                with base.KUBE.state.lock:
                    base.KUBE.state.cm["metadata"]["annotations"][OWNERS] = bad
                self.assertFailed(event("Create", SHARED, stack="blue"), "cannot read with certainty")
                self.assertSuccess(event("Delete", SHARED, pid=PID, stack="blue"))
                self.assertEqual(base.KUBE.state.writes, 0)
                self.assertIn("left as it is", self.out.getvalue())

    def test_stacks_sharing_a_role_created_and_deleted_at_once(self):
        self.seed_foreign(owners=FOREIGN_OWNERS)
        base.KUBE.state.conflict_every = 3  # on top of the real conflicts
        n, errors, invocations, lock = 24, [], [], threading.Lock()

        def worker(events):
            try:
                for ev in events:
                    with lock:
                        invocations.append(ev)
                    base.provider.handler(ev, base.Context(60))
            except Exception as err:  # noqa: BLE001
                errors.append(err)

        def run(plans):
            threads = [threading.Thread(target=worker, args=(plan,)) for plan in plans]
            for t in threads:
                t.start()
            for t in threads:
                t.join(55)

        stacks = ["s%02d" % k for k in range(n)]
        started = time.monotonic()
        # Every stack creates; the even ones delete again at once, while the
        # others are still creating.
        run([[event("Create", SHARED, stack=s)] + [event("Delete", SHARED, pid=PID, stack=s)] * (k % 2 == 0)
             for k, s in enumerate(stacks)])
        self.assertEqual(self.mapped(), 1)
        self.assertEqual(base.KUBE.state.owners()[SHARED], sorted(owner(s) for s in stacks[1::2]))
        # The odd ones delete, each delivered twice, while new stacks create.
        run([[event("Delete", SHARED, pid=PID, stack=s) for _ in range(2)] for s in stacks[1::2]]
            + [[event("Create", SHARED, stack="late%d" % k)] for k in range(4)])
        self.assertEqual(self.mapped(), 1)
        self.assertEqual(base.KUBE.state.owners()[SHARED], sorted(owner("late%d" % k) for k in range(4)))
        run([[event("Delete", SHARED, pid=PID, stack="late%d" % k)] for k in range(4)])
        elapsed = time.monotonic() - started
        self.assertEqual(errors, [])
        for ev in invocations:
            got = base.responses(ev)
            self.assertEqual(len(got), 1, "every invocation answered exactly once")
            self.assertEqual(got[0]["body"]["Status"], "SUCCESS", got[0]["body"]["Reason"])
        self.assertEqual(self.mapped(), 0)
        self.assertEqual(base.KUBE.state.owners(), FOREIGN_OWNERS)
        data = base.KUBE.state.data()
        self.assertEqual(data["mapRoles"], FOREIGN_MAP_ROLES)
        self.assertForeignIntact(data)
        self.assertGreater(base.KUBE.state.forced, 0)
        sys.__stderr__.write("[%d stacks sharing a role: %.1f s, %d writes, %d forced conflicts] " % (
            n + 4, elapsed, base.KUBE.state.writes, base.KUBE.state.forced))
