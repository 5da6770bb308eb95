"""The user-data checker reports what it is there to report: each file in
`broken/` is user data with one deliberate mistake, which the checker must
find; `clean.mime` has none. Run with the system python3 (cloud-init) and
shellcheck on PATH, or named by SHELLCHECK:

    SHELLCHECK=.venv-cfnlint/bin/shellcheck \
        /usr/bin/python3 -m unittest discover -s tests/userdata_consumers
"""

import contextlib
import io
import os
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check  # noqa: E402  (after the path is set)

SHELLCHECK = os.environ.get("SHELLCHECK", "shellcheck")


def problems_of(text, where="fixture"):
    report = check.Report()
    scripts = []
    check.check_user_data(where, text, report, scripts)
    check.run_shellcheck(scripts, SHELLCHECK, report)
    return report


def fixture(name):
    return (HERE / name).read_text(encoding="utf-8")


class BrokenUserDataIsReported(unittest.TestCase):
    # Each broken file, and what the report must say about it.
    EXPECTED = {
        "no-mime-version.mime": "cloud-init made parts ['text/x-not-multipart']",
        "boundary-mismatch.mime": "no part between its boundaries",
        "header-after-blank-line.mime": (
            "cloud-init made parts ['text/plain'] of the declared ['no Content-Type header']"
        ),
        "shell-part-without-shebang.mime": "does not start with a shell's `#!` line",
        "shell-part-warning.mime": "[SC2154]",
        "embedded-script-warning.mime": "the script of `cat > /usr/local/bin/example",
        "cloud-config-script-warning.mime": "write_files /usr/local/bin/example: shellcheck",
        "not-a-nodeconfig.mime": "kind is 'NodeConfiguration', not NodeConfig",
        "not-toml.toml": "neither MIME, a script, PowerShell nor TOML",
        "non-ascii-without-encoding.mime": "cloud-init's shell part handler wrote no script",
    }

    def test_every_broken_file_has_an_expectation(self):
        self.assertEqual(
            sorted(path.name for path in (HERE / "broken").iterdir()),
            sorted(self.EXPECTED),
        )

    def test_each_mistake_is_reported(self):
        for name, expected in self.EXPECTED.items():
            with self.subTest(name):
                report = problems_of(fixture(f"broken/{name}"), where=name)
                self.assertTrue(report.problems, f"{name}: nothing reported")
                self.assertTrue(
                    any(expected in problem for problem in report.problems),
                    f"{name}: {expected!r} not in {report.problems}",
                )
                self.assertTrue(
                    all(problem.startswith(name) for problem in report.problems),
                    report.problems,
                )

    def test_an_embedded_script_is_reported_and_not_its_host(self):
        report = problems_of(fixture("broken/embedded-script-warning.mime"))
        self.assertEqual(len(report.problems), 1, report.problems)
        self.assertIn("[SC2034]", report.problems[0])


class CleanUserDataPasses(unittest.TestCase):
    def test_every_part_is_checked_and_nothing_reported(self):
        report = problems_of(fixture("clean.mime"))
        self.assertEqual(report.problems, [])
        self.assertEqual(report.mime_parts, 3)
        # The shell part, its heredoc script and the write_files script.
        self.assertEqual(report.shell_scripts, 3)
        self.assertEqual(report.yaml_documents, 2)

    def test_a_plain_shell_script_is_a_shell_part_for_cloud_init(self):
        report = problems_of("#!/bin/bash\necho ready\n")
        self.assertEqual(report.problems, [])
        self.assertEqual((report.mime_parts, report.shell_scripts), (1, 1))


class NothingCheckedIsAFailure(unittest.TestCase):
    def test_files_without_a_template_fail(self):
        # A blueprint base is no template: nothing to check, so no pass.
        base = HERE.parent.parent / "examples" / "env-base" / "base.yaml"
        output = io.StringIO()
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            status = check.main(["--eksynth", "/nonexistent/eksynth", str(base)])
        self.assertEqual(status, 1)
        self.assertIn("no user data was checked at all", output.getvalue())


class SubstitutionIsCloudFormations(unittest.TestCase):
    TEMPLATE = {
        "Parameters": {
            "ClusterName": {"Type": "String"},
            "Size": {"Type": "Number", "Default": 3},
            "ImageId": {
                "Type": "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
                "Default": "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id",
            },
        },
        "Resources": {
            "NodeSecurityGroup": {"Type": "AWS::EC2::SecurityGroup"},
            "NodeRole": {"Type": "AWS::IAM::Role"},
        },
    }

    def substituted(self, argument):
        return check.substitute(argument, self.TEMPLATE)

    def test_escapes_pseudo_parameters_parameters_and_resources(self):
        self.assertEqual(
            self.substituted("${!x} ${AWS::Region} ${ClusterName} ${Size} ${ImageId} ${NodeSecurityGroup}"),
            "${x} eu-west-1 demo 3 ami-0123456789abcdef0 sg-0123456789abcdef1",
        )

    def test_the_variable_map_wins_and_is_resolved(self):
        self.assertEqual(
            self.substituted(["${Name}/${Arn}", {"Name": {"Fn::ImportValue": "net-ClusterName"}, "Arn": {"Fn::GetAtt": ["NodeRole", "Arn"]}}]),
            "demo/arn:aws:iam::123456789012:role/NodeRole",
        )

    def test_an_unknown_variable_is_an_error(self):
        with self.assertRaises(check.Unresolvable):
            self.substituted("${Missing}")


if __name__ == "__main__":
    unittest.main()
