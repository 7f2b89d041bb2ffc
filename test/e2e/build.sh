#!/usr/bin/env bash
# build.sh - build the e2e control plane from the Go module proxy (no containers, no git clones):
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl  (k8s.io/kubernetes $K8S_VERSION)
#   etcd  ($ETCD_VERSION)   kwok ($KWOK_VERSION, plus its upstream stage files)
# into $E2E_BIN (default ~/.cache/olm-cmp/e2e/bin). Each component writes a stamp file with its
# version + build recipe; a re-run with matching stamps and binaries is a no-op (< 1 s).
#
# Go caches: the shared defaults (go env GOCACHE / GOMODCACHE) unless set by the caller; the
# binaries themselves are what makes re-runs cheap, not the build cache.
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.34.4}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
CACHE=${OLM_CMP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/e2e}
BIN=${E2E_BIN:-$CACHE/bin}
export GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# the wrapper modules declare go 1.24.0: any Go >= 1.24 (1.26 here) builds them with GOTOOLCHAIN=local
mkdir -p "$BIN" "$CACHE"
GOV=$(go env GOVERSION)
t0=$SECONDS
log() { printf '[build %4ds] %s\n' $((SECONDS - t0)) "$*"; }
stamp_ok() { # name expected-stamp binaries...
  local name=$1 want=$2; shift 2
  [[ -f $BIN/.$name.stamp && $(cat "$BIN/.$name.stamp") == "$want" ]] || return 1
  local b; for b in "$@"; do [[ -x $BIN/$b ]] || return 1; done
}

# ------------------------------------------------------------------ kubernetes (+ kubectl)
K8S_STAMP="k8s=$K8S_VERSION go=$GOV recipe=2"
if stamp_ok k8s "$K8S_STAMP" kube-apiserver kube-controller-manager kube-scheduler kubectl; then
  log "kubernetes $K8S_VERSION: cached"
else
  W=$CACHE/src/k8s
  mkdir -p "$W"
  # k8s.io/kubernetes points every staging module at ./staging/...; a consumer module must pin them
  # to the matching published tag (v1.34.4 -> v0.34.4).
  [[ -f $W/go.mod ]] || printf 'module olm-cmp.e2e/k8s\n\ngo 1.24.0\n' > "$W/go.mod"
  KMOD=$(cd "$W" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f $KMOD ]] || { echo "build.sh: cannot download k8s.io/kubernetes@$K8S_VERSION" >&2; exit 1; }
  STAGING_V="v0.${K8S_VERSION#v1.}"
  {
    printf 'module olm-cmp.e2e/k8s\n\ngo 1.24.0\n\ngodebug default=go1.24\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
    grep -E '=> \./staging/' "$KMOD" | awk -v v="$STAGING_V" '{printf "\t%s => %s %s\n", $1, $1, v}'
    printf ')\n'
  } > "$W/go.mod"
  cat > "$W/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  log "go mod tidy (k8s.io/kubernetes $K8S_VERSION, staging $STAGING_V)"
  (cd "$W" && go mod tidy)
  MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
  LD="-s -w"
  # without these the binaries report v0.0.0-master+$Format:%H$ (and kubectl warns about skew)
  for P in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LD+=" -X $P.gitVersion=$K8S_VERSION -X $P.gitMajor=1 -X $P.gitMinor=$MINOR -X $P.gitTreeState=clean"
    LD+=" -X $P.buildDate=1970-01-01T00:00:00Z"
  done
  log "go build kube-apiserver kube-controller-manager kube-scheduler kubectl"
  rm -f "$BIN/.k8s.stamp"
  (cd "$W" && go build -trimpath -ldflags "$LD" -o "$BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  echo "$K8S_STAMP" > "$BIN/.k8s.stamp"
  log "kubernetes done"
fi

# ------------------------------------------------------------------ etcd
ETCD_STAMP="etcd=$ETCD_VERSION go=$GOV recipe=1"
if stamp_ok etcd "$ETCD_STAMP" etcd; then
  log "etcd $ETCD_VERSION: cached"
else
  # go.etcd.io/etcd/server/v3 has relative replace directives, so `go install pkg@version` refuses;
  # a wrapper module that requires it builds fine (its own requires pin matching versions).
  E=$CACHE/src/etcd
  mkdir -p "$E"
  printf 'module olm-cmp.e2e/etcd\n\ngo 1.24.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$E/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > "$E/tools.go"
  log "go build etcd $ETCD_VERSION"
  rm -f "$BIN/.etcd.stamp"
  (cd "$E" && go mod tidy && go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3)
  echo "$ETCD_STAMP" > "$BIN/.etcd.stamp"
  log "etcd done"
fi

# ------------------------------------------------------------------ kwok
KWOK_STAMP="kwok=$KWOK_VERSION go=$GOV recipe=1"
if stamp_ok kwok "$KWOK_STAMP" kwok; then
  log "kwok $KWOK_VERSION: cached"
else
  log "go install kwok $KWOK_VERSION"
  rm -f "$BIN/.kwok.stamp"
  GOBIN=$BIN go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  # explicit stage files (passed with --config): fast node init, heartbeat through node leases (so
  # the fake node stays Ready), pods Ready at once, Job pods complete, deletions finish.
  KSRC=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage
  rm -rf "$BIN/kwok-stages"; mkdir -p "$BIN/kwok-stages"
  cp "$KSRC"/node/fast/node-initialize.yaml "$KSRC"/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
     "$KSRC"/pod/fast/pod-ready.yaml "$KSRC"/pod/fast/pod-complete.yaml "$KSRC"/pod/fast/pod-delete.yaml \
     "$BIN/kwok-stages/"
  chmod 644 "$BIN"/kwok-stages/*.yaml
  echo "$KWOK_STAMP" > "$BIN/.kwok.stamp"
  log "kwok done"
fi
log "binaries in $BIN"
