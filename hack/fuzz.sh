#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the main module (func FuzzXxx in a
# _test.go file under cmd/ or internal/), one after the other, each for
# FUZZTIME (default 60s). Targets are found by name, so a new one is run
# without editing this file. A crasher is written by `go test` to
# <package>/testdata/fuzz/<FuzzName>/ and replays in every later `go test`:
# commit it with the fix. Set FUZZPARALLEL to limit fuzz workers (default:
# GOMAXPROCS). FUZZMINIMIZETIME (default 10s, go test's is 60s) bounds the
# minimizing of each new interesting input, during which nothing else runs:
# on a busy 2-core machine the default left targets idle for most of a
# minute-long run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime="${FUZZTIME:-60s}"
minimize="${FUZZMINIMIZETIME:-10s}"
parallel=()
if [[ -n ${FUZZPARALLEL:-} ]]; then parallel=(-parallel "$FUZZPARALLEL"); fi

mapfile -t targets < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' cmd internal |
	sed -E 's|^(.*)/[^/]*:func (Fuzz.*)$|./\1 \2|' | sort -u)
if ((${#targets[@]} == 0)); then
	echo "no fuzz targets found" >&2
	exit 1
fi

failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name in $pkg for $fuzztime"
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "${parallel[@]}" "$pkg"; then
		failed+=("$name ($pkg)")
	fi
done
if ((${#failed[@]} > 0)); then
	echo "fuzz targets that failed (their crashers are under <package>/testdata/fuzz/<target>/):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "all ${#targets[@]} fuzz targets ran $fuzztime without a failure"
