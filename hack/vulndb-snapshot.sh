#!/usr/bin/env bash
# vulndb-snapshot.sh: refresh hack/vulndb/, the offline snapshot of the Go
# vulnerability database that `make vulncheck` falls back to when
# https://vuln.go.dev cannot be reached (CI here reaches only the module
# proxy, which does not serve golang.org/x/vulndb).
#
#   git clone https://go.googlesource.com/vulndb /tmp/vulndb
#   hack/vulndb-snapshot.sh /tmp/vulndb
#
# It keeps the OSV entries (data/osv/GO-*.json) that name a module of the main
# module's build list, the standard library or the toolchain, as a flat
# directory of <ID>.json files: govulncheck -db file:///… reads such a
# directory directly and builds its own index. The source commit and date go
# into hack/vulndb/SOURCE so every result says how old its data is.
# The entries are the Go vulnerability database's data, CC BY 4.0 (see
# hack/vulndb/SOURCE).
set -euo pipefail

src=${1:?usage: $0 PATH-TO-VULNDB-CHECKOUT}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/hack/vulndb"
osvdir="$src/data/osv"
[[ -d $osvdir ]] || { echo "$0: $osvdir: not a golang.org/x/vulndb checkout (no data/osv)" >&2; exit 2; }

mods=$(cd "$root" && { go list -m -f '{{.Path}}' all; echo stdlib; echo toolchain; } | jq -R . | jq -sc .)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One jq over every file: print the name of each entry that affects a module we build.
find "$osvdir" -maxdepth 1 -name 'GO-*.json' -print0 |
	xargs -0 jq -r --argjson mods "$mods" \
		'select([.affected[]?.package.name] | any(. as $m | $mods | index($m))) | input_filename' |
	while read -r f; do cp "$f" "$tmp/"; done

# VULNDB_COMMIT / VULNDB_DATE name the source when it is an export, not a checkout.
commit=${VULNDB_COMMIT:-$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)}
date=${VULNDB_DATE:-$(git -C "$src" log -1 --format=%cs 2>/dev/null || echo unknown)}
rm -rf "$out"
mkdir -p "$out"
cp "$tmp"/*.json "$out/"
cat >"$out/SOURCE" <<EOT
Go vulnerability database snapshot (https://go.googlesource.com/vulndb, data/osv)
commit: $commit
date: $date
entries: $(ls "$out"/*.json | wc -l) (those naming a module of the main module's build list, stdlib or toolchain)
license: CC BY 4.0, https://creativecommons.org/licenses/by/4.0/ (the vulndb repository's data/LICENSE)
refresh: hack/vulndb-snapshot.sh PATH-TO-VULNDB-CHECKOUT
EOT
echo "hack/vulndb: $(ls "$out"/*.json | wc -l) entries from $commit ($date)"
