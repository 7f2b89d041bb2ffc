#!/usr/bin/env bash
# build-seeds.sh - build the seed operators (the ones olm-cmp was made for) for the `operators`
# suite (seeds_test.go), from their sources in ../shared/seedsrc (read its README.md: the exact
# revisions whose CSVs match ../shared/bundles), into $E2E_BIN (default ~/.cache/olm-cmp/e2e/bin):
#
#   lws-operator                  openshift/lws-operator (leader-worker-set 1.0.0), offline from vendor/
#   lws-manager                   kubernetes-sigs/lws v0.10.0's /manager, the operand lws-operator
#                                 deploys, from the Go module proxy
#   cert-manager-operator-1.19.1  openshift/cert-manager-operator, branch cert-manager-1.19, offline
#   cert-manager-operator-1.20.0  the same, branch cert-manager-1.20 (the bump), offline
#   sail-operator                 istio-ecosystem/sail-operator 1.30.3, from the proxy plus the two
#                                 dependencies the proxy refuses, from the tarball's deps/
#
# Each binary has a stamp (its source tarball's sha256, or module@version, the Go version and this
# recipe): a re-run with matching stamps is a no-op. Builds run one at a time under `nice` (each
# is 5-6 CPU-minutes on a shared machine); a failed build is reported, leaves
# $E2E_BIN/.seed-<name>.notbuilt with the reason, which TestOperatorsSeeds fails with (except a
# module the proxy refuses, lws v0.10.0 on some machines: then what needs it is skipped, by name,
# after the steps before it ran; LWS_GIT builds it), and does not stop the others. Without ../shared/seedsrc (a user's clone) nothing is built, the reason is
# left the same way, and the suite skips the seed operators. Called by build-operators.sh; runs
# alone too.
#
#   SEEDS="lws-operator lws-manager cert-manager-operator-1.19.1 cert-manager-operator-1.20.0 sail-operator"
#   OLM_CMP_SHARED=<dir>   the reference data (default: ../shared beside the repository)
#   LWS_GIT=<git dir>      a clone of github.com/kubernetes-sigs/lws, used only when the proxy
#                          refuses sigs.k8s.io/lws@v0.10.0 (see module_dir)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${OLM_CMP_SHARED:-$ROOT/../shared}/seedsrc
CACHE=${OLM_CMP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/e2e}
BIN=${E2E_BIN:-$CACHE/bin}
export CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
mkdir -p "$BIN" "$CACHE/src"
GOV=$(go env GOVERSION)
t0=$SECONDS
log() { printf '[seeds %4ds] %s\n' $((SECONDS - t0)) "$*"; }

# name | source (tarball in seedsrc, or module@version) | recipe
SPECS=(
  "lws-operator|lws-operator-87aecd42.tar.xz|vendor ./cmd/lws-operator"
  "lws-manager|sigs.k8s.io/lws@v0.10.0|proxy ./cmd LWS_GIT"
  "cert-manager-operator-1.19.1|cert-manager-operator-1.19-dc5057ca.tar.xz|workspace-vendor ."
  "cert-manager-operator-1.20.0|cert-manager-operator-1.20-3ba1f185.tar.xz|workspace-vendor ."
  "sail-operator|sail-operator-1.30.3-42411704.tar.xz|sail ./cmd"
)
WANT=${SEEDS:-lws-operator lws-manager cert-manager-operator-1.19.1 cert-manager-operator-1.20.0 sail-operator}
RECIPE=1

notbuilt() { # name reason
  echo "$2" > "$BIN/.seed-$1.notbuilt"
  log "$1: NOT BUILT: $2"
}

# module_dir module@version gitvar: the module's directory in the module cache, downloaded from the
# proxy. A proxy may refuse a module version (403 "This module version is not available": this
# machine's refuses sigs.k8s.io/lws@v0.10.0; proxy.golang.org serves it). Then, when the variable
# named gitvar holds a git directory of the module's repository, its tag is packed into a module
# zip served by a file:// GOPROXY placed before the proxy, and the go command checks that zip
# against the checksum database (GOSUMDB, through the proxy): the bytes are exactly what the proxy
# would have served, or the download fails. Prints nothing (and says why) when there is no source.
module_dir() {
  local mv=$1 gitvar=$2 mod=${1%@*} ver=${1#*@} dir err git tmp
  err=$(go mod download -json "$mv" 2>/dev/null | sed -n 's/.*"Error": "\(.*\)".*/\1/p' || true)
  if [[ -n $err ]]; then
    git=${!gitvar:-}
    if [[ -z $git ]]; then
      notbuilt "$name" "the module proxy refuses $mv ($(grep -o '[0-9][0-9][0-9] [A-Za-z ]*' <<<"$err" | head -1 || echo "$err")); set $gitvar to a git clone of its repository to build it from its tag $ver (checked against the checksum database)" >&2
      return 0
    fi
    tmp=$CACHE/src/seed-$name.proxy
    rm -rf "$tmp"; mkdir -p "$tmp/zip/$mod@$ver"
    log "$mv refused by the proxy: packing tag $ver of $git" >&2
    # a module zip leaves out nested modules (directories with their own go.mod); a partial clone may
    # lack their blobs, so git archive may complain about them: the checksum check below decides
    local ex=() d
    while read -r d; do ex+=(":(exclude)$d"); done < <(git --git-dir="$git" ls-tree -r --name-only "$ver" | sed -n 's|^\(.*\)/go.mod$|\1|p')
    { git --git-dir="$git" archive "$ver" -- . "${ex[@]}" 2>/dev/null || true; } | tar -x -C "$tmp/zip/$mod@$ver"
    local p=$tmp/proxy/$(sed 's/\([A-Z]\)/!\L\1/g' <<<"$mod")/@v   # module path case-encoding
    mkdir -p "$p"
    (cd "$tmp/zip" && zip -qr -X -D "$p/$ver.zip" .)
    cp "$tmp/zip/$mod@$ver/go.mod" "$p/$ver.mod"
    printf '{"Version":"%s","Time":"%s"}\n' "$ver" "$(git --git-dir="$git" log -1 --format=%cI "$ver")" > "$p/$ver.info"
    # the .info/.mod the refused download left are the proxy's, kept; the zip is checked against GOSUMDB
    if ! GOPROXY="file://$tmp/proxy,$(go env GOPROXY)" go mod download "$mv" > "$tmp.log" 2>&1; then
      notbuilt "$name" "the tag $ver of $git does not give $mv as the checksum database records it: $(head -2 "$tmp.log" | tr '\n' ' ')" >&2
      return 0
    fi
    rm -rf "$tmp" "$tmp.log"
  fi
  go mod download -json "$mv" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

# build name source kind pkg gitvar: unpack/copy the source to $W and go build pkg there into $BIN/name
build() {
  local name=$1 src=$2 kind=$3 pkg=$4 gitvar=$5 W=$CACHE/src/seed-$1 out=$BIN/$1 ldflags="-s -w" dir
  rm -rf "$W"; mkdir -p "$W"
  case $kind in
    vendor | workspace-vendor) # offline: every dependency is in the tarball's vendor/
      tar -xJf "$SRC/$src" -C "$W"
      export GOFLAGS=-mod=vendor GOPROXY=off
      if [[ $kind == workspace-vendor ]]; then
        # as its Makefile's build-operator sets them; the FIPS probe (hack/go-fips.sh) is left out:
        # this Go has no strictfipsruntime, so the Makefile falls back to this same plain build
        local rev=${src%.tar.xz}; rev=${rev##*-}
        ldflags+=" -X github.com/openshift/cert-manager-operator/pkg/version.SHORTCOMMIT=$rev"
        ldflags+=" -X github.com/openshift/cert-manager-operator/pkg/version.COMMIT=$rev"
      fi ;;
    proxy) # the module's own go.mod/go.sum, from the module cache (-mod=mod: only go.sum gaps fetched)
      unset GOPROXY; export GOFLAGS="-modcacherw -mod=mod"
      dir=$(cd "$CACHE/src" && module_dir "$src" "$gitvar")
      [[ -d $dir ]] || return 0
      cp -r "$dir/." "$W"; chmod -R u+w "$W" ;;
    sail) # from the proxy, but for two dependencies pinned at commits the proxy refuses: the packages
      # sail imports from them are in the tarball's deps/, used through replace directives
      tar -xJf "$SRC/$src" -C "$W"
      unset GOPROXY; export GOFLAGS="-modcacherw -mod=mod"
      W=$W/sail-operator-1.30.3
      (cd "$W" && go mod edit \
        -replace=github.com/openshift/api@v0.0.0-20260630164038-90cdc3bbde7f=../deps/openshift-api-90cdc3bb \
        -replace=istio.io/istio@v0.0.0-20260713165634-56df41f63e51=../deps/istio-56df41f6) ;;
  esac
  log "go build $name ($src, $pkg)"
  local s0=$SECONDS
  if (cd "$W" && nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg") > "$CACHE/src/seed-$name.log" 2>&1; then
    mv "$out.tmp" "$out"
    echo "$stamp" > "$BIN/.seed-$name.stamp"
    rm -f "$BIN/.seed-$name.notbuilt"
    rm -rf "$CACHE/src/seed-$name"   # 200-600 MB unpacked; the stamp, not the tree, makes re-runs no-ops
    log "$name: built in $((SECONDS - s0)) s -> $out"
  else
    rm -f "$out.tmp"
    notbuilt "$name" "go build failed ($((SECONDS - s0)) s): $(grep -v '^go: downloading' "$CACHE/src/seed-$name.log" | head -3 | tr '\n' ' ')(log: $CACHE/src/seed-$name.log)"
  fi
}

if [[ ! -d $SRC ]]; then
  # a user's clone: no seed sources, nothing to build (lws-manager alone would serve nothing)
  for spec in "${SPECS[@]}"; do
    echo "${SRC%/seedsrc}/seedsrc is absent: the seed operators' sources are in the project's shared reference data, not in a clone" > "$BIN/.seed-${spec%%|*}.notbuilt"
  done
  log "seed operators: not built: $SRC is absent (a clone without the shared reference data; the suite skips them, naming this)"
  exit 0
fi

failed=()
for spec in "${SPECS[@]}"; do
  IFS='|' read -r name src how <<<"$spec"
  [[ " $WANT " == *" $name "* ]] || continue
  read -r kind pkg gitvar <<<"$how"
  if [[ $kind != proxy && ! -f $SRC/$src ]]; then
    notbuilt "$name" "its source $src is not in $SRC (the seed sources are in the project's shared reference data, not in a clone)"
    failed+=("$name"); continue
  fi
  if [[ $kind == proxy ]]; then id=$src; else id="$src sha256:$(sha256sum "$SRC/$src" | cut -c1-16)"; fi
  stamp="$name=$id go=$GOV recipe=$RECIPE"
  if [[ -x $BIN/$name && -f $BIN/.seed-$name.stamp && $(cat "$BIN/.seed-$name.stamp") == "$stamp" ]]; then
    rm -f "$BIN/.seed-$name.notbuilt"
    log "$name: cached"
    continue
  fi
  rm -f "$BIN/.seed-$name.stamp"
  (build "$name" "$src" "$kind" "$pkg" "${gitvar:-}") || true   # a subshell: its exports stay in it
  [[ -x $BIN/$name && -f $BIN/.seed-$name.stamp ]] || failed+=("$name")
done
((${#failed[@]} == 0)) || log "not built: ${failed[*]} (TestOperatorsSeeds fails on them, naming the reason in $BIN/.seed-<name>.notbuilt)"
log "done"
