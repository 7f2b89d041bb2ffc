#!/usr/bin/env bash
# build-argocd.sh - build Argo CD's all-in-one binary (github.com/argoproj/argo-cd/v2/cmd, which
# dispatches on its program name) at the version test/argocd/go.mod pins, for the e2e Argo CD
# suite (test/e2e, suite "argocd"), and make sure redis-server (Debian package) is installed.
#
# Output: $ARGOCD_BIN (default ~/.cache/olm-cmp/argocd/bin): argocd + symlinks
# argocd-application-controller, argocd-repo-server, argocd-cmp-server; Argo CD's CRDs in crds/.
# The build happens in a private copy of test/argocd/go.mod (same requires and replace
# directives) under the cache, so this module's go.mod/go.sum are never modified.
# A re-run with the same go.mod, Go version and recipe is a no-op.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${OLM_CMP_ARGOCD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/argocd}
BIN=${ARGOCD_BIN:-$CACHE/bin}
export GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
t0=$SECONDS
log() { printf '[argocd %4ds] %s\n' $((SECONDS - t0)) "$*"; }

if ! command -v redis-server >/dev/null; then
  log "installing redis-server (Debian package)"
  SUDO=(); [[ $(id -u) == 0 ]] || SUDO=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi

VERSION=$(awk '{ if ($1 == "require") { $1 = "" ; $0 = $0 } } $1 == "github.com/argoproj/argo-cd/v2" {print $2; exit}' "$HERE/go.mod")
[[ -n $VERSION ]] || { echo "build-argocd.sh: no github.com/argoproj/argo-cd/v2 in $HERE/go.mod" >&2; exit 1; }
STAMP="argocd=$VERSION go=$(go env GOVERSION) gomod=$(sha256sum "$HERE/go.mod" | cut -c1-16) recipe=2"
if [[ -f $BIN/.stamp && $(cat "$BIN/.stamp") == "$STAMP" && -x $BIN/argocd ]]; then
  log "argo-cd $VERSION: cached in $BIN"
  exit 0
fi
SRC=$CACHE/src
mkdir -p "$SRC" "$BIN"
sed 's|^module .*|module olm-cmp.e2e/argocd|' "$HERE/go.mod" > "$SRC/go.mod"
cp "$HERE/go.sum" "$SRC/go.sum"
# The whole binary needs all of Argo CD's own replace directives (test/argocd's go.mod carries
# only those its packages need; e.g. notifications needs the telegram-bot-api fork): add the
# missing ones from upstream's go.mod (module-path replaces only, never local paths).
UPMOD=$(cd "$SRC" && go mod download -json "github.com/argoproj/argo-cd/v2@$VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
sed -n '/^replace (/,/^)/p' "$UPMOD" | awk '$2 == "=>" && $3 !~ /^\./ {print $1, $3, $4}' | while read -r from to ver; do
  grep -qE "^[[:space:]]*(replace[[:space:]]+)?${from//./\\.}[[:space:]]+=>" "$SRC/go.mod" || echo "replace $from => $to $ver" >> "$SRC/go.mod"
done
cat > "$SRC/tools.go" <<'GO'
//go:build tools

package tools

import _ "github.com/argoproj/argo-cd/v2/cmd"
GO
log "go mod tidy (argo-cd $VERSION)"
(cd "$SRC" && go mod tidy)
P=github.com/argoproj/argo-cd/v2/common
log "go build argo-cd $VERSION"
rm -f "$BIN/.stamp"
(cd "$SRC" && go build -trimpath -ldflags "-s -w -X $P.version=${VERSION#v} -X $P.gitTreeState=clean" \
  -o "$BIN/argocd" github.com/argoproj/argo-cd/v2/cmd)
for n in argocd-application-controller argocd-repo-server argocd-cmp-server argocd-server; do
  ln -sf argocd "$BIN/$n"
done
MOD=$(cd "$SRC" && go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v2)
rm -rf "$BIN/crds"; mkdir -p "$BIN/crds"
cp "$MOD"/manifests/crds/application-crd.yaml "$MOD"/manifests/crds/appproject-crd.yaml "$BIN/crds/"
chmod 644 "$BIN"/crds/*.yaml
echo "$STAMP" > "$BIN/.stamp"
log "done: $BIN"
