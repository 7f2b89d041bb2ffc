#!/usr/bin/env bash
# vulncheck.sh: govulncheck on every package of the main module, with the
# Go vulnerability database (https://vuln.go.dev, or GOVULNDB: a mirror,
# https://… or file:///…).
#
# govulncheck is pinned (GOVULNCHECK_VERSION) and installed from the module
# proxy into the per-user tool directory, as internal/cmpserver/generate.sh
# installs its tools.
#
# When the live database cannot be reached (CI here reaches only the module
# proxy), the check runs against hack/vulndb, an offline snapshot of the
# database's entries for the modules we build (hack/vulndb/SOURCE says from
# which commit and date; hack/vulndb-snapshot.sh refreshes it). The result says
# which database it used. VULNCHECK_STRICT=1 refuses the fallback.
#
# Exit status: 0 when no vulnerability affects the code; 3 (govulncheck's own)
# when one does: fix it, or explain it in docs/operations.md. Any other error
# fails.
set -euo pipefail

GOVULNCHECK_VERSION=v1.9.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${OLM_CMP_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/bin}"
mkdir -p "$bin"
pkg="golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION"
stamp="$bin/.govulncheck.version"
if [[ ! -x "$bin/govulncheck" || ! -f "$stamp" || "$(cat "$stamp")" != "$pkg" ]]; then
	echo "installing $pkg into $bin" >&2
	(cd "$root" && GOBIN="$bin" GOFLAGS=-mod=mod go install "$pkg")
	echo "$pkg" >"$stamp"
fi

snapshot="$root/hack/vulndb"
db="${GOVULNDB:-https://vuln.go.dev}"
errlog="$(mktemp)"
trap 'rm -f "$errlog"' EXIT
cd "$root"

run() {
	set +e
	"$bin/govulncheck" -db "$1" ./... 2> >(tee "$errlog" >&2)
	rc=$?
	set -e
	wait # for tee
}

run "$db"
if ((rc == 1)) && grep -q 'fetching vulnerabilities' "$errlog"; then
	echo "vulncheck: the vulnerability database $db cannot be reached from here." >&2
	if [[ ${VULNCHECK_STRICT:-} == 1 ]]; then
		echo "vulncheck: VULNCHECK_STRICT=1: not falling back to the snapshot." >&2
		exit 1
	fi
	echo "vulncheck: checking against the offline snapshot hack/vulndb ($(grep -E '^(date|commit):' "$snapshot/SOURCE" | tr '\n' ' '))." >&2
	run "file://$snapshot"
fi
exit $rc
