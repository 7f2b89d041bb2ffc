#!/usr/bin/env bash
# Runs the Argo CD client tests: test/argocd (Argo CD v2.14) and
# test/argocd-v3 (Argo CD v3.2), each a separate Go module, against a fresh
# build of ./cmd/olm-cmp.
#
#   test/argocd/run.sh                 # go test -count=1 ./... in both modules
#   test/argocd/run.sh test -run TestNative -v
#   test/argocd/run.sh bench           # BenchmarkWarmRender (v2 module; needs ../shared);
#                                      # BENCH=1 test/argocd/run.sh does the same (make bench)
#   MODULES="argocd-v3" test/argocd/run.sh test
#
# The first (cold) build of Argo CD's dependency tree takes ~10 min on 2 cores;
# GOCACHE defaults to Go's persistent user cache so later runs take seconds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
testdir=$(dirname "$here")

export GOFLAGS="${GOFLAGS:--modcacherw}"
if [[ -z "${GOCACHE:-}" || "${GOCACHE}" == off ]]; then
	GOCACHE=$(env -u GOCACHE go env GOCACHE)
fi
export GOCACHE
export GOWORK=off

what=test
[[ ${BENCH:-} == 1 ]] && what=bench
if [[ $# -gt 0 ]]; then
	what=$1
	shift
fi

case $what in
test)
	modules=${MODULES:-argocd argocd-v3}
	args=(-count=1 -timeout=20m "$@" ./...)
	;;
bench)
	modules=${MODULES:-argocd}
	args=(-count=1 -timeout=30m -run '^$' -bench BenchmarkWarmRender -benchtime=${BENCHTIME:-2s} "$@" ./...)
	;;
*)
	echo "usage: $0 [test|bench] [go test flags...]" >&2
	exit 2
	;;
esac

status=0
summary=()
for mod in $modules; do
	echo "=== $mod: go test ${args[*]}"
	start=$(date +%s)
	if (cd "$testdir/$mod" && go test "${args[@]}"); then
		result=ok
	else
		result=FAIL
		status=1
	fi
	summary+=("$(printf '%-10s %-4s %4ss' "$mod" "$result" "$(($(date +%s) - start))")")
done
echo "=== summary (GOCACHE=$GOCACHE)"
printf '%s\n' "${summary[@]}"
exit $status
