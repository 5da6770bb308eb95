#!/usr/bin/env python3
"""The peer suite: `eksynth validate` over cfn-lint's own test fixtures.

    python3 tests/peer/run.py --eksynth target/release/eksynth
    python3 tests/peer/run.py --refresh --cfn-lint .venv-cfnlint/bin/cfn-lint

cfn-lint's source distribution on PyPI ships its test fixtures,
`test/fixtures/templates/good` and `bad`. The pinned version is downloaded
once (`pip download --no-binary :all: --no-deps`) into a git-ignored cache
beside this script, and every fixture is validated by one `eksynth validate
--format json` run. Two numbers come out, each held in `ratchet.json` and
allowed only to improve:

- `good_false_errors`: good fixtures that cfn-lint passes without an error
  but on which eksynth reports one (target 0);
- `bad_caught_share`: of the bad fixtures cfn-lint reports an error on, the
  share eksynth reports an error on too (target 0.9 or more).

A `ratchet.json` looser than either target is itself a failure.

What cfn-lint says of each fixture is committed data
(`cfn-lint-verdicts.json`), produced by `--refresh` with the pinned
cfn-lint, so that a normal run needs eksynth only. Fixtures where cfn-lint
is wrong are listed, with the reason, in `known-disagreements.txt` and left
out of both numbers.

A fixture counts when cfn-lint reads it as a template: every `.yaml`,
`.yml`, `.json` or `.template` file of the two folders (cfn-lint's own
template extensions). Its verdict is `error` when cfn-lint reports at least
one E-level finding with its default rules, `clean` otherwise.
"""

import argparse
import json
import subprocess
import sys
import tarfile
from pathlib import Path

CFN_LINT_VERSION = "1.58.0"
HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
VERDICTS = HERE / "cfn-lint-verdicts.json"
RATCHET = HERE / "ratchet.json"
DISAGREEMENTS = HERE / "known-disagreements.txt"
FOLDERS = ("good", "bad")
EXTENSIONS = (".yaml", ".yml", ".json", ".template")
FIXTURES_IN_SDIST = f"cfn_lint-{CFN_LINT_VERSION}/test/fixtures/templates"
# The floor under `ratchet.json`: it may be tightened, never loosened past
# these.
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


def refresh(root, cfn_lint):
    names = fixtures(root)
    run = subprocess.run(
        [cfn_lint, "--format", "json", "--", *names],
        cwd=root, capture_output=True, text=True, check=False,
    )
    try:
        matches = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"cfn-lint printed no JSON (exit {run.returncode}):\n{run.stderr}")
    errors = {m["Filename"] for m in matches if m["Level"] == "Error"}
    verdicts = {name: "error" if name in errors else "clean" for name in names}
    VERDICTS.write_text(json.dumps(verdicts, indent=2, sort_keys=True) + "\n")
    print(f"{VERDICTS.name}: {len(verdicts)} fixtures, {len(errors)} with a cfn-lint error")


def known_disagreements():
    """`PATH reason...` lines; `#` starts a comment. Every line needs a
    reason."""
    known = {}
    for number, line in enumerate(DISAGREEMENTS.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        path, _, reason = line.partition(" ")
        if not reason.strip():
            sys.exit(f"{DISAGREEMENTS.name}:{number}: `{path}` has no reason")
        known[path] = reason.strip()
    return known


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eksynth", default="target/release/eksynth")
    parser.add_argument("--refresh", action="store_true",
                        help="rewrite cfn-lint-verdicts.json with the pinned cfn-lint")
    parser.add_argument("--cfn-lint", default=".venv-cfnlint/bin/cfn-lint")
    parser.add_argument("--verbose", action="store_true",
                        help="list every fixture that counts against a number")
    args = parser.parse_args()
    root = fixtures_root()
    if args.refresh:
        refresh(root, str(Path(args.cfn_lint).resolve()))
        return
    verdicts = json.loads(VERDICTS.read_text())
    names = fixtures(root)
    if sorted(verdicts) != names:
        sys.exit(f"{VERDICTS.name} does not list the fixtures of cfn-lint "
                 f"{CFN_LINT_VERSION}: run with --refresh")
    known = known_disagreements()
    stale = sorted(set(known) - set(names))
    if stale:
        sys.exit(f"{DISAGREEMENTS.name} names fixtures that do not exist: {', '.join(stale)}")
    errors = eksynth_errors(root, str(Path(args.eksynth).resolve()), names)
    counted = [n for n in names if n not in known]
    good = [n for n in counted if n.startswith("good/") and verdicts[n] == "clean"]
    bad = [n for n in counted if n.startswith("bad/") and verdicts[n] == "error"]
    false_errors = [n for n in good if n in errors]
    missed = [n for n in bad if n not in errors]
    caught_share = round((len(bad) - len(missed)) / len(bad), 4) if bad else 1.0

    if args.verbose:
        for name in false_errors:
            print(f"false error: {name}: {errors[name]}")
        for name in missed:
            print(f"missed: {name}")
    print(f"good fixtures cfn-lint passes: {len(good)}, eksynth errors on {len(false_errors)}")
    print(f"bad fixtures cfn-lint errors on: {len(bad)}, eksynth errors on "
          f"{len(bad) - len(missed)} ({caught_share:.2%})")
    print(f"left out as known disagreements: {len(known)}")

    ratchet = json.loads(RATCHET.read_text())
    if (ratchet["good_false_errors"] > TARGETS["good_false_errors"]
            or ratchet["bad_caught_share"] < TARGETS["bad_caught_share"]):
        sys.exit(f"{RATCHET.name} holds {ratchet}, looser than the targets {TARGETS}")
    worse = []
    better = []
    if len(false_errors) > ratchet["good_false_errors"]:
        worse.append(f"good_false_errors {len(false_errors)} > {ratchet['good_false_errors']}")
    elif len(false_errors) < ratchet["good_false_errors"]:
        better.append(f"good_false_errors to {len(false_errors)}")
    if caught_share < ratchet["bad_caught_share"]:
        worse.append(f"bad_caught_share {caught_share} < {ratchet['bad_caught_share']}")
    elif caught_share > ratchet["bad_caught_share"]:
        better.append(f"bad_caught_share to {caught_share}")
    if worse:
        print(f"error: worse than {RATCHET.name}: {'; '.join(worse)} "
              "(--verbose lists the fixtures)", file=sys.stderr)
        sys.exit(1)
    if better:
        print(f"better than {RATCHET.name}: tighten it, set {' and '.join(better)}")


if __name__ == "__main__":
    main()
