#!/usr/bin/env bash
# Cross-checks the validator corpus (tests/validate/) against cfn-lint.
#
#   bash tests/validate_cfn_lint.sh .venv-cfnlint/bin/cfn-lint
#
# - A case with `# cfn-lint: RULE` lines must get every one of those rules
#   from cfn-lint (other cfn-lint findings are allowed).
# - A template case with `# expect: clean` must get nothing from cfn-lint.
# - Anything else (findings cfn-lint misses, blueprints) is not asserted.
#
# The header of a YAML case is its leading `#` lines; a JSON case's is its
# `<file>.expect` sidecar (see tests/validate/README.md).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 PATH/TO/cfn-lint" >&2
  exit 2
fi
cfn_lint=$1
if ! version=$("$cfn_lint" --version 2>&1); then
  echo "error: cannot run \`$cfn_lint --version\`: $version" >&2
  exit 2
fi

corpus=$(cd "$(dirname "${BASH_SOURCE[0]}")/validate" && pwd)

header() {
  case $1 in
    *.json) cat "$1.expect" ;;
    *) awk '/^#/ { print; next } { exit }' "$1" ;;
  esac
}

shopt -s nullglob
cases=("$corpus"/*.yaml "$corpus"/*.yml "$corpus"/*.json)
asserted=()
for case in "${cases[@]}"; do
  head=$(header "$case")
  if grep -q '^# cfn-lint:' <<<"$head" ||
    { grep -q '^# expect: clean[[:space:]]*$' <<<"$head" && ! grep -q '^apiVersion: eksynth.io/' "$case"; }; then
    asserted+=("$case")
  fi
done

# The cases tests/validate.rs generates because they are too big to commit,
# built the same way, with the rule cfn-lint reports for them. cfn-lint 1.58
# has no parameter-count rule, so `201-parameters.yaml` is not here, and it
# says nothing below 1 MB (I1002 is informational and off by default).
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
security_group() { echo "  Sg$1: {Type: AWS::EC2::SecurityGroup, Properties: {GroupDescription: g}}"; }
{
  echo "# cfn-lint: E3010"
  echo "Resources:"
  for i in $(seq 0 500); do security_group "$i"; done
} >"$generated/501-resources.yaml"
{
  echo "# cfn-lint: E6010"
  echo "Resources:"
  security_group 0
  echo "Outputs:"
  for i in $(seq 0 200); do printf '  O%d:\n    Value: !Ref Sg0\n' "$i"; done
} >"$generated/201-outputs.yaml"
{
  echo "# cfn-lint: E1002"
  grep -v '^# expect:' "$corpus/clean-node-group.yaml"
  line="# $(printf 'padding %.0s' {1..9})"
  for _ in $(seq 1 $((1000000 / ${#line} + 1))); do echo "$line"; done
} >"$generated/over-1mb.yaml"
cases+=("$generated"/*.yaml)
asserted+=("$generated"/*.yaml)

# One cfn-lint run for every asserted case (it starts slowly). It exits
# non-zero when it finds something, which is the point here. `parseable`
# lines are FILE:LINE:COL:ENDLINE:ENDCOL:RULE:MESSAGE.
output=$("$cfn_lint" --format parseable -- "${asserted[@]}" 2>&1) || true

agreed=0
disagreed=0
clean=0
unasserted=0
failures=()
for case in "${cases[@]}"; do
  name=${case#"$corpus"/}
  name=${name/#"$generated"/generated}
  head=$(header "$case")
  rules=$(sed -n 's/^# cfn-lint:[[:space:]]*\([A-Z][0-9]\{4\}\)[[:space:]]*$/\1/p' <<<"$head")
  is_clean=false
  if grep -q '^# expect: clean[[:space:]]*$' <<<"$head" && ! grep -q '^apiVersion: eksynth.io/' "$case"; then
    is_clean=true
  fi
  if [[ -z $rules ]] && ! $is_clean; then
    unasserted=$((unasserted + 1))
    continue
  fi
  lines=$(awk -v file="$case" 'index($0, file ":") == 1' <<<"$output")
  reported=$(awk -F: 'NF >= 7 { print $6 }' <<<"$lines" | sort -u)
  if $is_clean; then
    if [[ -z $reported ]]; then
      clean=$((clean + 1))
    else
      disagreed=$((disagreed + 1))
      failures+=("$name: expected clean, cfn-lint reports ${reported//$'\n'/ }"$'\n'"$lines")
    fi
    continue
  fi
  for rule in $rules; do
    if grep -qx "$rule" <<<"$reported"; then
      agreed=$((agreed + 1))
    else
      disagreed=$((disagreed + 1))
      failures+=("$name: expected cfn-lint $rule, got: ${reported:-nothing}"$'\n'"$lines")
    fi
  done
done

for failure in "${failures[@]}"; do
  echo "DISAGREE $failure"
  echo
done
echo "$version: $agreed rule expectations agree, $clean clean cases clean," \
  "$disagreed disagreements, $unasserted cases not asserted"
[[ $disagreed -eq 0 ]]
# The corpus holds 40 cfn-lint expectations; fewer agreeing means the
# headers or this script stopped being read, not that all is well.
[[ $agreed -ge 40 ]]
