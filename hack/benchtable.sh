#!/usr/bin/env bash
# benchtable.sh: the before/after table of `make bench` (docs/operations.md,
# "Start-up and render cost"): olm-cmp at BASE (default: the commit before
# issue 30's start-up and render work) against this tree, for `olm-cmp
# version` and the renders of leader-worker-set, sail-operator and kubevirt
# (../shared/bundles).
#
#   CPU and peak RSS: whole processes, the two binaries run alternately
#   (hack/growth, medians of RUNS), their output compared byte for byte.
#   "warm" renders use the default cache directory, so a build that keeps
#   CRD verdicts reads the last run's; "cold" ones get a new, empty
#   --cache-dir each.
#   Allocations: `version`, the package initialisation's (GODEBUG=inittrace);
#   a render, BenchmarkRender* of internal/render in each tree (a render in a
#   process that has judged the bundle's CRDs before, as a warm one has; the
#   "before" build keeps no verdict between processes, so its warm and cold
#   whole-process figures are the same work).
#
#   OLM_EXTRACTOR names an olm-extractor binary (github.com/lburgazzoli/
#   olm-extractor at c62c95f, `go build .` in a checkout of it): the renders
#   are then also run alternately with its `run -n NS DIR`, warm and cold,
#   and the table gains a column: after's CPU over olm-extractor's (the
#   median of the pairs' ratios; the outputs differ and are not compared).
#
#   hack/benchtable.sh                  # BASE=d5b6ac3 RUNS=5
#   BASE=HEAD~3 RUNS=9 hack/benchtable.sh
#   OLM_EXTRACTOR=../olm-extractor/olm-extractor hack/benchtable.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:-d5b6ac3}
RUNS=${RUNS:-5}
shared=$(cd .. && pwd)/shared
if [[ ! -d $shared/bundles ]]; then
	echo "benchtable.sh: ../shared/bundles is missing (reference data outside the repository): nothing to measure" >&2
	exit 0
fi
bundles=(leader-worker-set-1.0.0 sailoperator-1.30.3 community-kubevirt-hyperconverged-1.18.1)
dirs=()
for b in "${bundles[@]}"; do dirs+=("$shared/bundles/$b"); done

make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git archive "$BASE" | tar -x -C "$tmp/base"
ln -s "$shared" "$tmp/shared" # the base tree's tests read ../shared
# olm-cmp-check beside olm-cmp where BASE has it (olm-cmp runs it from there)
(cd "$tmp/base" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/base-bin/" ./cmd/olm-cmp $(ls -d ./cmd/olm-cmp-check 2>/dev/null))

echo "whole processes, $RUNS runs each, alternately (medians)..." >&2
# -differ-ok: the default BASE is older than d1ac25c, which added
# PruneLast=true to RBAC objects: the bundles that differ are named on
# stderr. A BASE from d1ac25c on (BASE=main, for a change of one's own)
# must print the same bytes, or this fails.
differ=()
if ! git merge-base --is-ancestor d1ac25c "$BASE" 2>/dev/null; then
	differ=(-differ-ok)
fi
go run ./hack/growth "${differ[@]}" -bin bin/olm-cmp -base "$tmp/base-bin/olm-cmp" -runs "$RUNS" "${dirs[@]}" >"$tmp/warm.md"
go run ./hack/growth "${differ[@]}" -cold -bin bin/olm-cmp -base "$tmp/base-bin/olm-cmp" -runs "$RUNS" "${dirs[@]}" >"$tmp/cold.md"
if [[ -n ${OLM_EXTRACTOR:-} ]]; then
	echo "the renders against olm-extractor, $RUNS runs each, alternately..." >&2
	go run ./hack/growth -bin bin/olm-cmp -olm-extractor "$OLM_EXTRACTOR" -runs "$RUNS" "${dirs[@]}" >"$tmp/xwarm.md"
	go run ./hack/growth -cold -bin bin/olm-cmp -olm-extractor "$OLM_EXTRACTOR" -runs "$RUNS" "${dirs[@]}" >"$tmp/xcold.md"
fi

echo "allocations..." >&2
inits() { GODEBUG=inittrace=1 "$1" version 2>&1 >/dev/null | awk '$1 == "init" {a += $10; b += $8} END {printf "%d %.1f", a, b / 1e6}'; }
benchre='^BenchmarkRender(LWS|Sail|Kubevirt)$'
# -count 2: the second run of each is read (the last line wins below): its
# process has judged the bundle's CRDs, as a warm render has.
(cd "$tmp/base" && go test -run '^$' -bench "$benchre" -benchmem -benchtime 3x -count 2 ./internal/render/) >"$tmp/base.bench"
go test -run '^$' -bench "$benchre" -benchmem -benchtime 3x -count 2 ./internal/render/ >"$tmp/new.bench"
# benchAllocs NAME FILE: allocations and MB per render of BenchmarkRenderNAME,
# its last run in FILE.
benchAllocs() {
	awk -v n="BenchmarkRender$1" '$1 ~ "^"n"(-[0-9]+)?$" {
		for (i = 1; i < NF; i++) {if ($(i+1) == "allocs/op") a = $i; if ($(i+1) == "B/op") m = $i}
	} END {printf "%d %.1f\n", a, m / 1e6}' "$2"
}
{
	echo "version $(inits "$tmp/base-bin/olm-cmp") $(inits bin/olm-cmp)"
	for pair in LWS:leader-worker-set-1.0.0 Sail:sailoperator-1.30.3 Kubevirt:community-kubevirt-hyperconverged-1.18.1; do
		b=${pair%%:*}
		# BenchmarkRenderSail-2  3  N ns/op  X MB/s  B B/op  A allocs/op
		read -r ba bb < <(benchAllocs "$b" "$tmp/base.bench")
		read -r na nb < <(benchAllocs "$b" "$tmp/new.bench")
		echo "${pair#*:} $ba $bb $na $nb"
	done
} >"$tmp/allocs"

# growth rows: | name | size | output | CPU | RSS | base CPU | ratio | base RSS |
row() { # file name -> "baseCPU newCPU ratio baseRSS newRSS"
	awk -F'|' -v n="$2" '{g=$2; gsub(/^ +| +$/, "", g)} g == n || (n == "version" && g ~ /^start-up/) {
		gsub(/ /, ""); print $7, $5, $8, $9, $6}' "$1"
}
echo
echo "olm-cmp $(git -C "$tmp/base" log -1 --format=%h 2>/dev/null || echo "$BASE") (before) against this tree (after); CPU-seconds and peak RSS of whole processes, medians of $RUNS alternate runs (ratios: the median of each pair's); allocations: count and MB"
echo
# xratio FILE NAME: after's CPU over olm-extractor's in FILE, with its RSS.
xratio() {
	[[ -f $1 ]] || return 0
	read -r xc _ ratio xr _ < <(row "$1" "$2")
	echo " $ratio (its CPU $xc, RSS $xr) |"
}
xhead="" xrule=""
if [[ -n ${OLM_EXTRACTOR:-} ]]; then
	xhead=" after / olm-extractor |" xrule="---:|"
fi
echo "| what | CPU before | CPU after | after/before | peak RSS before | after | allocations before | after |$xhead"
echo "|---|---:|---:|---:|---:|---:|---:|---:|$xrule"
while read -r what ba bb na nb; do
	if [[ $what == version ]]; then
		read -r bc nc ratio br nr < <(row "$tmp/warm.md" version)
		echo "| \`olm-cmp version\` (allocations: package initialisation) | $bc | $nc | $ratio | $br | $nr | $ba ($bb MB) | $na ($nb MB) |${xhead:+ |}"
		continue
	fi
	read -r bc nc ratio br nr < <(row "$tmp/warm.md" "$what")
	echo "| render $what, warm (CRD verdicts of the last run) | $bc | $nc | $ratio | $br | $nr | $ba ($bb MB) | $na ($nb MB) |$(xratio "$tmp/xwarm.md" "$what")"
	read -r bc nc ratio br nr < <(row "$tmp/cold.md" "$what")
	echo "| render $what, cold (new cache directory) | $bc | $nc | $ratio | $br | $nr | | |$(xratio "$tmp/xcold.md" "$what")"
done <"$tmp/allocs"
