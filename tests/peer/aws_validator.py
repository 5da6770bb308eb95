#!/usr/bin/env python3
"""AWS's CloudFormation validator over many templates in one process.

    python3 tests/peer/aws_validator.py FILE...

`cloudformation-validate` (PyPI) is a library with no command of its own:
this builds one engine (`CompositeEngine`, the built-in rules and no custom
ones, what the AWS CDK runs after synthesis) and validates every file with
it, since building the engine is most of the cost. It prints one JSON
object on stdout,

    {"version": "1.14.0", "files": {"FILE": {"verdict": "error", "first": "E3012 ..."}}}

with each file's verdict `error` when the validator reports at least one
diagnostic of severity ERROR or FATAL (a template that does not parse is a
FATAL `F1101`), `clean` otherwise, and the first such diagnostic's rule ID
and message. Exit status: 0 when every file is clean, 1 when one has an
error, 2 when the package is missing or a file cannot be read. The peer
suite (`run.py`) and the process benchmark (`benches/process.rs`) run it.
"""

import json
import sys

ERROR_SEVERITIES = ("ERROR", "FATAL")


def main():
    files = sys.argv[1:]
    if not files or any(name.startswith("-") for name in files):
        sys.exit(f"usage: {sys.argv[0]} FILE...")
    try:
        import cloudformation_validate as cfv
    except ImportError:
        print("error: the Python package cloudformation-validate is not installed "
              f"for {sys.executable}", file=sys.stderr)
        sys.exit(2)
    engine = cfv.CompositeEngine()
    # STANDARD leaves out documentation URLs and rule descriptions, which
    # nothing here reads; the diagnostics are the same.
    config = cfv.ValidateConfig(detail_level=cfv.DetailLevel.STANDARD)
    verdicts = {}
    for name in files:
        try:
            report = engine.validate_template(name, config)
        except OSError as error:
            print(f"error: {name}: {error}", file=sys.stderr)
            sys.exit(2)
        errors = [d for d in report.diagnostics if d.severity.name in ERROR_SEVERITIES]
        if errors or report.status.name == "ERROR":
            first = f"{errors[0].rule_id} {errors[0].message}" if errors else report.status.name
            verdicts[name] = {"verdict": "error", "first": first}
        else:
            verdicts[name] = {"verdict": "clean"}
    json.dump({"version": cfv.version(), "files": verdicts}, sys.stdout, indent=2, sort_keys=True)
    print()
    sys.exit(1 if any(v["verdict"] == "error" for v in verdicts.values()) else 0)


if __name__ == "__main__":
    main()
