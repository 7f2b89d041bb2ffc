#!/usr/bin/env bash
# Prints the CHANGELOG.md section of release TAG (the lines under "## TAG",
# up to the next "## "), for the release workflow's notes. Fails when the
# section is missing or empty: write it before tagging.
#   hack/release-notes.sh v0.2.0 [CHANGELOG.md]
set -euo pipefail
tag=${1:?usage: $0 TAG [CHANGELOG.md]}
file=${2:-CHANGELOG.md}
notes=$(awk -v tag="$tag" '
	/^## / { if (found) exit; split($0, w, " "); if (w[2] == tag) { found = 1; next } }
	found { print }
' "$file")
if [[ -z "${notes//[[:space:]]/}" ]]; then
	echo "$file has no section \"## $tag\": add the release's notes there before tagging" >&2
	exit 1
fi
printf '%s\n' "$notes"
