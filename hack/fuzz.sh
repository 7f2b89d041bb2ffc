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
# minute-long run. FUZZTIMEOUT (default 20m) is go test's -timeout: raise it
# with a FUZZTIME near it.
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

# corpus lists a target's corpus files, to tell a written crasher from none.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name in $pkg for $fuzztime"
	before="$(corpus "$pkg" "$name")"
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" \
		-timeout "${FUZZTIMEOUT:-20m}" "${parallel[@]}" "$pkg" 2>&1 | tee "$out"; then
		continue
	fi
	# Go 1.26's fuzz coordinator can fail a target with a bare "context
	# deadline exceeded" when -fuzztime runs out on a busy machine
	# (golang/go#75804, fixed in Go 1.27). A real failure always writes its
	# input to the corpus; this writes none.
	if [[ "$(corpus "$pkg" "$name")" == "$before" ]] && grep -q '^[[:space:]]*context deadline exceeded$' "$out"; then
		echo "== $name: ignored the fuzz coordinator's end-of-time race (golang/go#75804): no failing input was found" >&2
		continue
	fi
	failed+=("$name ($pkg)")
done
if ((${#failed[@]} > 0)); then
	echo "fuzz targets that failed (their crashers are under <package>/testdata/fuzz/<target>/):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "all ${#targets[@]} fuzz targets ran $fuzztime without a failure"
