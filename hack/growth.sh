#!/usr/bin/env bash
# growth.sh: the whole-process cost of `olm-cmp render` against bundle size
# (docs/operations.md, "Sizing the sidecar"): for each bundle directory of
# ../shared/bundles (or the directories given), the median CPU-seconds and
# peak RSS of RUNS renders (default 5) of bin/olm-cmp, built first.
#
# BASE=<git revision> also builds that revision and runs the two binaries
# alternately, so both see the same machine load, and prints the CPU ratio
# (and fails if their output differs): on a shared machine compare ratios,
# not absolute times.
#
#   hack/growth.sh                              # the 16 reference bundles
#   BASE=8b4ea22 RUNS=7 hack/growth.sh ../shared/bundles/sailoperator-1.30.3
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(-bin bin/olm-cmp -runs "$RUNS")
if [[ -n ${BASE:-} ]]; then
	git archive "$BASE" | tar -x -C "$tmp"
	# olm-cmp-check beside olm-cmp where the revision has it (olm-cmp runs it from there)
	(cd "$tmp" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o base-bin/ ./cmd/olm-cmp $(ls -d ./cmd/olm-cmp-check 2>/dev/null))
	args+=(-base "$tmp/base-bin/olm-cmp")
fi
if [[ $# -eq 0 ]]; then
	shopt -s nullglob
	set -- ../shared/bundles/*/
	if [[ $# -eq 0 ]]; then
		echo "growth.sh: no bundles: ../shared/bundles is missing (give bundle directories as arguments)" >&2
		exit 1
	fi
fi
go run ./hack/growth "${args[@]}" "$@"
