#!/usr/bin/env bash
# build-argocd.sh - build Argo CD's all-in-one binary (<module>/cmd, which dispatches on its
# program name) for the e2e Argo CD suites (test/e2e), and make sure redis-server (Debian
# package) is installed.
#
#   test/argocd/build-argocd.sh [v3|v2]      # default v3
#
#   v3: github.com/argoproj/argo-cd/v3 at the version test/argocd-v3/go.mod pins (3.6.1), built
#       with the Go toolchain that module asks for (GOTOOLCHAIN=go1.27.0, served by the module
#       proxy), into ~/.cache/olm-cmp/argocd-v3/bin; plus git-verify-wrapper.sh from the module's
#       hack/ (Argo CD 3.x's repo-server runs it for every revision; its image ships it on PATH).
#   v2: github.com/argoproj/argo-cd/v2 at the version test/argocd/go.mod pins (2.14.21), with the
#       local Go, into ~/.cache/olm-cmp/argocd/bin.
#
# Output ($ARGOCD_BIN overrides the directory): argocd + symlinks argocd-application-controller,
# argocd-repo-server, argocd-cmp-server, argocd-server; Argo CD's CRDs in crds/.
# The build happens in a private copy of the test module's go.mod (same requires and replace
# directives) under the cache, so the repository's go.mod/go.sum are never modified.
# A re-run with the same go.mod, Go version and recipe is a no-op.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
variant=${1:-v3}
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp
case $variant in
v3)
  MODDIR=$HERE/../argocd-v3 MODPATH=github.com/argoproj/argo-cd/v3
  CACHE=${OLM_CMP_ARGOCD_CACHE:-$CACHE_ROOT/argocd-v3}
  # the module's go directive asks for Go 1.27; the proxy serves that toolchain
  export GOTOOLCHAIN=go1.27.0
  ;;
v2)
  MODDIR=$HERE MODPATH=github.com/argoproj/argo-cd/v2
  CACHE=${OLM_CMP_ARGOCD_CACHE:-$CACHE_ROOT/argocd}
  export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
  ;;
*) echo "usage: $0 [v3|v2]" >&2; exit 2 ;;
esac
BIN=${ARGOCD_BIN:-$CACHE/bin}
export GOFLAGS=-modcacherw CGO_ENABLED=0 GOWORK=off
t0=$SECONDS
log() { printf '[argocd-%s %4ds] %s\n' "$variant" $((SECONDS - t0)) "$*"; }

if ! command -v redis-server >/dev/null; then
  log "installing redis-server (Debian package)"
  SUDO=(); [[ $(id -u) == 0 ]] || SUDO=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi

VERSION=$(awk '{ if ($1 == "require") { $1 = "" ; $0 = $0 } } $1 == m {print $2; exit}' m="$MODPATH" "$MODDIR/go.mod")
[[ -n $VERSION ]] || { echo "build-argocd.sh: no $MODPATH in $MODDIR/go.mod" >&2; exit 1; }
STAMP="argocd=$VERSION go=$(cd "$MODDIR" && go env GOVERSION) gomod=$(sha256sum "$MODDIR/go.mod" | cut -c1-16) recipe=3"
if [[ -f $BIN/.stamp && $(cat "$BIN/.stamp") == "$STAMP" && -x $BIN/argocd ]]; then
  log "argo-cd $VERSION: cached in $BIN"
  exit 0
fi
SRC=$CACHE/src
mkdir -p "$SRC" "$BIN"
sed 's|^module .*|module olm-cmp.e2e/argocd|' "$MODDIR/go.mod" > "$SRC/go.mod"
cp "$MODDIR/go.sum" "$SRC/go.sum"
# The whole binary needs all of Argo CD's own replace directives (the test module carries only
# those its packages need; e.g. notifications needs the telegram-bot-api fork): add the missing
# ones from upstream's go.mod (module-path replaces only, never local paths such as v3's
# ./gitops-engine, which the proxy serves as its own module).
UPMOD=$(cd "$SRC" && go mod download -json "$MODPATH@$VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
sed -n '/^replace (/,/^)/p' "$UPMOD" | awk '$2 == "=>" && $3 !~ /^\./ {print $1, $3, $4}' | while read -r from to ver; do
  grep -qE "^[[:space:]]*(replace[[:space:]]+)?${from//./\\.}[[:space:]]+=>" "$SRC/go.mod" || echo "replace $from => $to $ver" >> "$SRC/go.mod"
done
printf '//go:build tools\n\npackage tools\n\nimport _ "%s/cmd"\n' "$MODPATH" > "$SRC/tools.go"
log "go mod tidy (argo-cd $VERSION)"
(cd "$SRC" && go mod tidy)
P=$MODPATH/common
log "go build argo-cd $VERSION ($(cd "$SRC" && go env GOVERSION))"
rm -f "$BIN/.stamp"
(cd "$SRC" && go build -trimpath -ldflags "-s -w -X $P.version=${VERSION#v} -X $P.gitTreeState=clean" \
  -o "$BIN/argocd" "$MODPATH/cmd")
for n in argocd-application-controller argocd-repo-server argocd-cmp-server argocd-server; do
  ln -sf argocd "$BIN/$n"
done
MOD=$(cd "$SRC" && go list -m -f '{{.Dir}}' "$MODPATH")
rm -rf "$BIN/crds"; mkdir -p "$BIN/crds"
cp "$MOD"/manifests/crds/application-crd.yaml "$MOD"/manifests/crds/appproject-crd.yaml "$BIN/crds/"
chmod 644 "$BIN"/crds/*.yaml
if [[ -f $MOD/hack/git-verify-wrapper.sh ]]; then
  install -m 755 "$MOD/hack/git-verify-wrapper.sh" "$BIN/git-verify-wrapper.sh"
fi
echo "$STAMP" > "$BIN/.stamp"
log "done: $BIN"
