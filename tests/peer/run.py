#!/usr/bin/env python3
"""The peer suite: `eksynth validate` over cfn-lint's own test fixtures,
beside cfn-lint and AWS's `cloudformation-validate`.

    python3 tests/peer/run.py --eksynth target/release/eksynth
    python3 tests/peer/run.py --eksynth target/release/eksynth \
        --aws-validator-python .venv-cfnlint/bin/python3
    .venv-cfnlint/bin/python3 tests/peer/run.py --refresh --cfn-lint .venv-cfnlint/bin/cfn-lint

cfn-lint's source distribution on PyPI ships its test fixtures,
`test/fixtures/templates/good` and `bad`. The pinned version is downloaded
once (`pip download --no-binary :all: --no-deps`) into a git-ignored cache
beside this script, and every fixture is validated by one `eksynth validate
--format json` run. Each fixture then has three verdicts, `error` or
`clean`: cfn-lint's, cloudformation-validate's and eksynth's. The run
prints eksynth's agreement with each peer, what each tool says of the good
fixtures cfn-lint passes and of the bad fixtures cfn-lint reports an error
on, and the fixtures both peers report an error on that eksynth passes.

Three numbers are held in `ratchet.json` and allowed only to improve:

- `good_false_errors`: good fixtures that cfn-lint passes without an error
  but on which eksynth reports one (target 0);
- `bad_caught_share`: of the bad fixtures cfn-lint reports an error on, the
  share eksynth reports an error on too (target 0.9 or more);
- `misses_both_peers`: fixtures both peers report an error on and eksynth
  passes. Each needs its reason in `known-disagreements.txt`; one without
  is a failure.

A `ratchet.json` looser than a target is itself a failure.

What each peer says of each fixture is committed data
(`cfn-lint-verdicts.json`, `cloudformation-validate-verdicts.json`),
rewritten by `--refresh` with the pinned versions, so that a normal run
needs eksynth only. With `--aws-validator-python` (a Python that has the
pinned cloudformation-validate; CI passes it), the run also validates
every fixture with cloudformation-validate again and fails unless it says
what is recorded.

`known-disagreements.txt` has two sections. Fixtures under `[a peer is
wrong]` are left out of every number, with the reason the peer's verdict
is wrong. Fixtures under `[eksynth does not check]` are misses of both
peers, counted, with the reason eksynth leaves the check out; an entry
that is not such a miss (any more) is a failure, so the list stays true.

A fixture counts when cfn-lint reads it as a template: every `.yaml`,
`.yml`, `.json` or `.template` file of the two folders (cfn-lint's own
template extensions). cfn-lint's verdict is `error` when it reports at
least one E-level finding with its default rules; cloudformation-validate's
when it reports a diagnostic of severity ERROR or FATAL with its built-in
rules (`aws_validator.py`); eksynth's when it reports an error.
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

CFN_LINT_VERSION = "1.58.0"
AWS_VALIDATOR_VERSION = "1.14.0"
HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
PEERS = ("cfn-lint", "cloudformation-validate")
VERDICTS = {
    "cfn-lint": HERE / "cfn-lint-verdicts.json",
    "cloudformation-validate": HERE / "cloudformation-validate-verdicts.json",
}
AWS_VALIDATOR = HERE / "aws_validator.py"
RATCHET = HERE / "ratchet.json"
DISAGREEMENTS = HERE / "known-disagreements.txt"
PEER_WRONG = "a peer is wrong"
NOT_CHECKED = "eksynth does not check"
FOLDERS = ("good", "bad")
EXTENSIONS = (".yaml", ".yml", ".json", ".template")
FIXTURES_IN_SDIST = f"cfn_lint-{CFN_LINT_VERSION}/test/fixtures/templates"
# The floor under `ratchet.json`: it may be tightened, never loosened past
# these. Misses of both peers have no floor of their own: each one must be
# explained in known-disagreements.txt.
TARGETS = {"good_false_errors": 0, "bad_caught_share": 0.9}


def fixtures_root():
    """The fixtures folder of the pinned sdist, downloaded and extracted
    into the cache on first use."""
    root = CACHE / FIXTURES_IN_SDIST
    if (root / "good").is_dir() and (root / "bad").is_dir():
        return root
    CACHE.mkdir(exist_ok=True)
    sdist = CACHE / f"cfn_lint-{CFN_LINT_VERSION}.tar.gz"
    if not sdist.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet",
             "--disable-pip-version-check", "--no-binary", ":all:", "--no-deps",
             f"cfn-lint=={CFN_LINT_VERSION}", "-d", str(CACHE)],
            check=True,
        )
    prefixes = tuple(f"{FIXTURES_IN_SDIST}/{folder}/" for folder in FOLDERS)
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers()
                   if m.isfile() and m.name.startswith(prefixes)]
        archive.extractall(CACHE, members=members, filter="data")
    return root


def fixtures(root):
    """Every fixture cfn-lint reads as a template, as `good/...` paths."""
    return sorted(
        str(path.relative_to(root))
        for folder in FOLDERS
        for path in (root / folder).rglob("*")
        if path.is_file() and path.suffix in EXTENSIONS
    )


def cfn_lint_verdicts(root, cfn_lint, names):
    run = subprocess.run(
        [cfn_lint, "--format", "json", "--", *names],
        cwd=root, capture_output=True, text=True, check=False,
    )
    try:
        matches = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"cfn-lint printed no JSON (exit {run.returncode}):\n{run.stderr}")
    errors = {m["Filename"] for m in matches if m["Level"] == "Error"}
    return {name: "error" if name in errors else "clean" for name in names}


def aws_validator_verdicts(root, python, names):
    """cloudformation-validate's verdicts, from one process of
    `aws_validator.py` run by `python`, which must have the pinned
    version. A path to it is taken from the current directory, not from
    the fixtures' where it runs; a bare name is looked up on PATH."""
    if os.sep in python:
        # Not resolved: a virtualenv's python3 is a link to the base
        # interpreter, which lacks the virtualenv's packages.
        python = os.path.abspath(python)
    run = subprocess.run(
        [python, str(AWS_VALIDATOR), *names],
        cwd=root, capture_output=True, text=True, check=False,
    )
    if run.returncode not in (0, 1):
        sys.exit(f"{AWS_VALIDATOR.name} failed (exit {run.returncode}):\n{run.stderr}")
    report = json.loads(run.stdout)
    if report["version"] != AWS_VALIDATOR_VERSION:
        sys.exit(f"{python} has cloudformation-validate {report['version']}, "
                 f"not the pinned {AWS_VALIDATOR_VERSION}")
    return {name: entry["verdict"] for name, entry in report["files"].items()}


def write_verdicts(peer, verdicts):
    path = VERDICTS[peer]
    path.write_text(json.dumps(verdicts, indent=2, sort_keys=True) + "\n")
    errors = sum(v == "error" for v in verdicts.values())
    print(f"{path.name}: {len(verdicts)} fixtures, {errors} with an error of {peer}")


def known_disagreements():
    """The two sections of `PATH reason...` lines, each a dict; `#` starts
    a comment. Every line needs a reason and a section."""
    sections = {PEER_WRONG: {}, NOT_CHECKED: {}}
    section = None
    for number, line in enumerate(DISAGREEMENTS.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            if section not in sections:
                sys.exit(f"{DISAGREEMENTS.name}:{number}: unknown section `{line}`, "
                         f"expected [{PEER_WRONG}] or [{NOT_CHECKED}]")
            continue
        if section is None:
            sys.exit(f"{DISAGREEMENTS.name}:{number}: a fixture before the first section")
        path, _, reason = line.partition(" ")
        if not reason.strip():
            sys.exit(f"{DISAGREEMENTS.name}:{number}: `{path}` has no reason")
        sections[section][path] = reason.strip()
    return sections


def eksynth_errors(root, eksynth, names):
    """The fixtures eksynth reports an error on, with the first error's
    finding ID and message."""
    run = subprocess.run(
        [eksynth, "validate", "--format", "json", "--", *names],
        cwd=root, capture_output=True, text=True, check=False,
    )
    if run.returncode not in (0, 1, 2):
        sys.exit(f"eksynth validate crashed (exit {run.returncode}):\n{run.stderr}")
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"eksynth validate printed no JSON (exit {run.returncode}):\n{run.stderr}")
    seen = {entry["file"] for entry in report["files"]}
    missing = sorted(set(names) - seen)
    if missing:
        sys.exit(f"eksynth validate said nothing of: {', '.join(missing)}")
    errors = {}
    for entry in report["files"]:
        first = next((f for f in entry["findings"] if f["level"] == "error"), None)
        if first is not None:
            errors[entry["file"]] = f"{first.get('id') or '-'} {first['message']}"
    return errors


def share(part, whole):
    return f"{part} of {whole} ({part / whole:.2%})" if whole else f"{part} of 0"


def report(names, verdicts, errors, known, verbose):
    """Prints the comparison and returns the ratcheted numbers."""
    counted = [n for n in names if n not in known[PEER_WRONG]]
    ours = {n: "error" if n in errors else "clean" for n in counted}
    lint = verdicts["cfn-lint"]
    good = [n for n in counted if n.startswith("good/") and lint[n] == "clean"]
    bad = [n for n in counted if n.startswith("bad/") and lint[n] == "error"]
    tools = {"cfn-lint": lint, "cloudformation-validate": verdicts["cloudformation-validate"],
             "eksynth": ours}
    print(f"fixtures: {len(counted)} counted, {len(known[PEER_WRONG])} left out "
          f"(a peer is wrong, {DISAGREEMENTS.name})")
    for peer in PEERS:
        agree = sum(ours[n] == tools[peer][n] for n in counted)
        print(f"eksynth agrees with {peer} on {share(agree, len(counted))} fixtures")
    print(f"errors on the {len(good)} good fixtures cfn-lint passes: "
          + ", ".join(f"{tool} {sum(v[n] == 'error' for n in good)}" for tool, v in tools.items()))
    print(f"errors on the {len(bad)} bad fixtures cfn-lint errors on: "
          + ", ".join(f"{tool} {share(sum(v[n] == 'error' for n in bad), len(bad))}"
                      for tool, v in tools.items()))

    both = [n for n in counted if all(tools[p][n] == "error" for p in PEERS)]
    misses = [n for n in both if ours[n] == "clean"]
    print(f"fixtures both peers report an error on: {len(both)}, eksynth passes {len(misses)}:")
    for name in misses:
        if name not in known[NOT_CHECKED]:
            print(f"  {name}: UNEXPLAINED: fix it, or give the reason under "
                  f"[{NOT_CHECKED}] in {DISAGREEMENTS.name}")
        elif verbose:
            print(f"  {name}: {known[NOT_CHECKED][name]}")
        else:
            print(f"  {name} (explained in {DISAGREEMENTS.name})")

    false_errors = [n for n in good if ours[n] == "error"]
    missed = [n for n in bad if ours[n] == "clean"]
    if verbose:
        for name in false_errors:
            print(f"false error: {name}: {errors[name]}")
        for name in missed:
            print(f"missed: {name}")
        for peer in PEERS:
            for name in counted:
                if ours[name] != tools[peer][name]:
                    print(f"unlike {peer}: {name}: {peer} {tools[peer][name]}, "
                          f"eksynth {errors.get(name, 'clean')}")

    unexplained = [n for n in misses if n not in known[NOT_CHECKED]]
    stale = sorted(set(known[NOT_CHECKED]) - set(misses))
    if unexplained or stale:
        if unexplained:
            print(f"error: eksynth passes what both peers report an error on, "
                  f"unexplained: {', '.join(unexplained)}", file=sys.stderr)
        if stale:
            print(f"error: [{NOT_CHECKED}] in {DISAGREEMENTS.name} lists fixtures that are "
                  f"no miss of both peers: {', '.join(stale)}", file=sys.stderr)
        sys.exit(1)
    return {
        "good_false_errors": len(false_errors),
        "bad_caught_share": round((len(bad) - len(missed)) / len(bad), 4) if bad else 1.0,
        "misses_both_peers": len(misses),
    }


def hold_ratchet(numbers):
    ratchet = json.loads(RATCHET.read_text())
    if (ratchet["good_false_errors"] > TARGETS["good_false_errors"]
            or ratchet["bad_caught_share"] < TARGETS["bad_caught_share"]):
        sys.exit(f"{RATCHET.name} holds {ratchet}, looser than the targets {TARGETS}")
    worse = []
    better = []
    # Lower is better for the counts, higher for the share.
    for key, higher_is_better in (("good_false_errors", False), ("bad_caught_share", True),
                                  ("misses_both_peers", False)):
        now, held = numbers[key], ratchet[key]
        if now == held:
            continue
        if (now > held) == higher_is_better:
            better.append(f"{key} to {now}")
        else:
            worse.append(f"{key} {now}, {RATCHET.name} holds {held}")
    if worse:
        print(f"error: worse than {RATCHET.name}: {'; '.join(worse)} "
              "(--verbose lists the fixtures)", file=sys.stderr)
        sys.exit(1)
    if better:
        print(f"better than {RATCHET.name}: tighten it, set {' and '.join(better)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eksynth", default="target/release/eksynth")
    parser.add_argument("--refresh", action="store_true",
                        help="rewrite both peers' verdicts with the pinned versions")
    parser.add_argument("--cfn-lint", default=".venv-cfnlint/bin/cfn-lint")
    parser.add_argument("--aws-validator-python", metavar="PYTHON",
                        help="a Python with cloudformation-validate "
                             f"{AWS_VALIDATOR_VERSION}: run it, and hold it to its verdicts "
                             "(with --refresh: record them; this Python if not given)")
    parser.add_argument("--verbose", action="store_true",
                        help="list every fixture that counts against a number "
                             "or where eksynth and a peer differ")
    args = parser.parse_args()
    root = fixtures_root()
    names = fixtures(root)
    if args.refresh:
        # The Python running this script is CI's virtualenv's, which has
        # cloudformation-validate, unless another is named.
        python = args.aws_validator_python or sys.executable
        write_verdicts("cfn-lint", cfn_lint_verdicts(root, str(Path(args.cfn_lint).resolve()), names))
        write_verdicts("cloudformation-validate", aws_validator_verdicts(root, python, names))
        return
    verdicts = {peer: json.loads(VERDICTS[peer].read_text()) for peer in PEERS}
    for peer in PEERS:
        if sorted(verdicts[peer]) != names:
            sys.exit(f"{VERDICTS[peer].name} does not list the fixtures of cfn-lint "
                     f"{CFN_LINT_VERSION}: run with --refresh")
    if args.aws_validator_python:
        live = aws_validator_verdicts(root, args.aws_validator_python, names)
        changed = sorted(n for n in names if live[n] != verdicts["cloudformation-validate"][n])
        if changed:
            sys.exit(f"cloudformation-validate {AWS_VALIDATOR_VERSION} says otherwise than "
                     f"{VERDICTS['cloudformation-validate'].name} of: {', '.join(changed)} "
                     "(run with --refresh)")
        print(f"cloudformation-validate {AWS_VALIDATOR_VERSION} run: its verdicts are the recorded ones")
    known = known_disagreements()
    for section, entries in known.items():
        stale = sorted(set(entries) - set(names))
        if stale:
            sys.exit(f"{DISAGREEMENTS.name} [{section}] names fixtures that do not exist: "
                     f"{', '.join(stale)}")
    errors = eksynth_errors(root, str(Path(args.eksynth).resolve()), names)
    hold_ratchet(report(names, verdicts, errors, known, args.verbose))


if __name__ == "__main__":
    main()
