"""The peer suite's own judgement (`run.py`), on small made-up verdicts:
what counts as a miss of both peers, when the run fails, and how the
ratchet and `known-disagreements.txt` are read.

    python3 -m unittest discover -s tests/peer
"""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

import run

# Five fixtures: what cfn-lint, cloudformation-validate and eksynth say of
# each. `bad/both.yaml` is the one both peers fail and eksynth passes.
NAMES = ["bad/both.yaml", "bad/caught.yaml", "bad/lint-only.yaml", "good/clean.yaml",
         "good/aws-only.yaml"]
VERDICTS = {
    "cfn-lint": {"bad/both.yaml": "error", "bad/caught.yaml": "error",
                 "bad/lint-only.yaml": "error", "good/clean.yaml": "clean",
                 "good/aws-only.yaml": "clean"},
    "cloudformation-validate": {"bad/both.yaml": "error", "bad/caught.yaml": "error",
                                "bad/lint-only.yaml": "clean", "good/clean.yaml": "clean",
                                "good/aws-only.yaml": "error"},
}
ERRORS = {"bad/caught.yaml": "E3012 wrong type"}


def known(not_checked=None, peer_wrong=None):
    return {run.PEER_WRONG: peer_wrong or {}, run.NOT_CHECKED: not_checked or {}}


def report(known_disagreements):
    """`run.report`'s numbers and printed lines, or the exit it ends in."""
    out = io.StringIO()
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            numbers = run.report(NAMES, VERDICTS, ERRORS, known_disagreements, verbose=False)
        except SystemExit as exit_:
            return exit_.code, out.getvalue(), err.getvalue()
    return numbers, out.getvalue(), err.getvalue()


class Report(unittest.TestCase):
    def test_a_miss_of_both_peers_without_a_reason_fails(self):
        code, out, err = report(known())
        self.assertEqual(code, 1)
        self.assertIn("bad/both.yaml: UNEXPLAINED", out)
        self.assertIn("unexplained: bad/both.yaml", err)

    def test_an_explained_miss_is_counted_and_passes(self):
        numbers, out, _ = report(known(not_checked={"bad/both.yaml": "out of scope"}))
        self.assertEqual(numbers, {"good_false_errors": 0, "bad_caught_share": 0.3333,
                                   "misses_both_peers": 1})
        self.assertIn("eksynth agrees with cfn-lint on 3 of 5 (60.00%) fixtures", out)
        self.assertIn("eksynth agrees with cloudformation-validate on 3 of 5 (60.00%) fixtures", out)
        self.assertIn("errors on the 2 good fixtures cfn-lint passes: cfn-lint 0, "
                      "cloudformation-validate 1, eksynth 0", out)
        self.assertIn("fixtures both peers report an error on: 2, eksynth passes 1:", out)

    def test_a_reason_for_what_is_no_miss_of_both_peers_fails(self):
        code, _, err = report(known(not_checked={"bad/both.yaml": "out of scope",
                                                 "bad/lint-only.yaml": "only cfn-lint"}))
        self.assertEqual(code, 1)
        self.assertIn("no miss of both peers: bad/lint-only.yaml", err)

    def test_a_fixture_a_peer_is_wrong_about_is_left_out(self):
        numbers, out, _ = report(known(peer_wrong={"bad/both.yaml": "cfn-lint's own setting"}))
        self.assertEqual(numbers["misses_both_peers"], 0)
        self.assertEqual(numbers["bad_caught_share"], 0.5)
        self.assertIn("fixtures: 4 counted, 1 left out", out)


class Disagreements(unittest.TestCase):
    def read(self, text):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "known-disagreements.txt"
            path.write_text(text)
            saved, run.DISAGREEMENTS = run.DISAGREEMENTS, path
            try:
                return run.known_disagreements()
            finally:
                run.DISAGREEMENTS = saved

    def test_sections_hold_their_fixtures(self):
        sections = self.read("# a comment\n[a peer is wrong]\nbad/a.yaml why a\n\n"
                             "[eksynth does not check]\ngood/b.yaml why b\n")
        self.assertEqual(sections, known(peer_wrong={"bad/a.yaml": "why a"},
                                         not_checked={"good/b.yaml": "why b"}))

    def test_a_fixture_outside_a_section_an_unknown_section_or_no_reason_fails(self):
        for text, message in [
            ("bad/a.yaml why\n", "before the first section"),
            ("[peers]\n", "unknown section"),
            ("[a peer is wrong]\nbad/a.yaml\n", "has no reason"),
        ]:
            with self.assertRaises(SystemExit) as raised:
                self.read(text)
            self.assertIn(message, str(raised.exception.code))


class Ratchet(unittest.TestCase):
    def hold(self, held, numbers):
        out = io.StringIO()
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "ratchet.json"
            path.write_text(json.dumps(held))
            saved, run.RATCHET = run.RATCHET, path
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    run.hold_ratchet(numbers)
                code = 0
            except SystemExit as exit_:
                code = exit_.code
            finally:
                run.RATCHET = saved
        return code, out.getvalue(), err.getvalue()

    HELD = {"good_false_errors": 0, "bad_caught_share": 0.95, "misses_both_peers": 4}

    def test_more_misses_of_both_peers_fail(self):
        code, _, err = self.hold(self.HELD, dict(self.HELD, misses_both_peers=5))
        self.assertEqual(code, 1)
        self.assertIn("misses_both_peers 5, ratchet.json holds 4", err)

    def test_fewer_misses_and_a_higher_share_ask_for_tightening(self):
        code, out, _ = self.hold(self.HELD, dict(self.HELD, misses_both_peers=3,
                                                 bad_caught_share=0.96))
        self.assertEqual(code, 0)
        self.assertIn("set bad_caught_share to 0.96 and misses_both_peers to 3", out)

    def test_a_ratchet_looser_than_the_targets_fails(self):
        code, _, _ = self.hold(dict(self.HELD, bad_caught_share=0.8), self.HELD)
        self.assertIn("looser than the targets", str(code))


if __name__ == "__main__":
    unittest.main()
