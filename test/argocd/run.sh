#!/usr/bin/env bash
# Runs the Argo CD client tests: test/argocd (Argo CD v2.14.21) and
# test/argocd-v3 (Argo CD v3.6.1, plus the health checks under deploy/argocd run
# through Argo CD's own Lua engine), each a separate Go module, against a fresh
# build of ./cmd/olm-cmp. A module whose go directive is newer than the local
# Go is built with that toolchain (GOTOOLCHAIN=goX.Y.Z, from the module proxy):
# argocd-v3 needs Go 1.27, the main module does not.
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

# toolchain GOMOD: "local" when the local Go satisfies the module's go directive,
# else that exact toolchain.
toolchain() {
	local want have
	want=$(awk '$1 == "go" {print $2; exit}' "$1")
	have=$(GOTOOLCHAIN=local go env GOVERSION)
	have=${have#go}
	if [[ $(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1) == "$want" ]]; then
		echo local
	else
		echo "go$want"
	fi
}

status=0
summary=()
for mod in $modules; do
	echo "=== $mod: go test ${args[*]}"
	start=$(date +%s)
	if (cd "$testdir/$mod" && GOTOOLCHAIN=$(toolchain "$testdir/$mod/go.mod") go test "${args[@]}"); then
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
