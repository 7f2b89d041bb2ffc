#!/usr/bin/env bash
# check-tracked.sh: fails when Git tracks a build output: a file over 2 MB, or
# an executable binary (ELF, Mach-O, PE, or any executable file holding NUL
# bytes). Part of `make lint`, so a stray `go build` output never lands again.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
max=$((2 * 1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
	[[ -f $f && ! -L $f ]] || continue
	size=$(stat -c %s -- "$f")
	if ((size > max)); then
		echo "tracked file over 2 MB: $f ($size bytes): untrack it (git rm --cached) and ignore it" >&2
		bad=1
		continue
	fi
	magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
	case $magic in
	7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | 4d5a*)
		echo "tracked binary: $f (executable format): untrack it (git rm --cached) and ignore it" >&2
		bad=1
		continue
		;;
	esac
	if [[ -x $f ]] && LC_ALL=C grep -qaP '\x00' -- "$f"; then
		echo "tracked binary: $f (executable with NUL bytes): untrack it and ignore it" >&2
		bad=1
	fi
done < <(git ls-files -z)
exit $bad
