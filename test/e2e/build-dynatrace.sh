#!/usr/bin/env bash
# build-dynatrace.sh - build Dynatrace's dynatrace-operator (one binary: `operator`, `webhook-server`,
# `csi-*`, ... are its subcommands) from the Go module proxy at the version the shared bundle
# ships, into $E2E_BIN (default ~/.cache/olm-cmp/e2e/bin) as `dynatrace-operator`. Stamped: a
# re-run with a matching stamp and binary is a no-op. Called by build-operators.sh; runs alone too.
# Also copies the module's own DynaKube samples (assets/samples/dynakube/<version>/, the bundle's
# alm-examples are empty) to $E2E_BIN/dynatrace-operator-samples/ for the webhooks test.
#
# Built as the main module in its own downloaded, checksummed directory, so the build list is
# exactly its go.mod/go.sum (go 1.26.0, no replace directives). Not `go install <pkg>@<version>`:
# that also reads the module's version list for deprecations (@v/list), which a filtering proxy
# may refuse. Version ldflags as its Dockerfile / hack/build/create_go_linker_args.sh set them.
#
# One dependency, github.com/Dynatrace/dynatrace-bootstrapper, may be refused by a filtering proxy
# (403 "This module version is not available"; proxy.golang.org itself serves it). Then, with
#   DT_BOOTSTRAPPER_GIT=<a git directory of github.com/Dynatrace/dynatrace-bootstrapper>
# its tag is packed into a module zip served by a file:// GOPROXY placed before the proxy; the
# go command checks that zip against the h1: hash in dynatrace-operator's go.sum, so the source is
# byte for byte what the proxy would have served (a mismatch is a checksum error, never a build).
set -euo pipefail
DT_VERSION=${DT_VERSION:-v1.10.2}
CACHE=${OLM_CMP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/e2e}
BIN=${E2E_BIN:-$CACHE/bin}
export GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
mkdir -p "$BIN"
GOV=$(go env GOVERSION)
STAMP="dynatrace-operator=$DT_VERSION go=$GOV recipe=2"
if [[ -x $BIN/dynatrace-operator && -d $BIN/dynatrace-operator-samples && -f $BIN/.dynatrace-operator.stamp &&
      $(cat "$BIN/.dynatrace-operator.stamp") == "$STAMP" ]]; then
  echo "[build-dynatrace] dynatrace-operator $DT_VERSION: cached"
  exit 0
fi
t0=$SECONDS
PKG=github.com/Dynatrace/dynatrace-operator
BOOT=github.com/Dynatrace/dynatrace-bootstrapper
TMP=$(mktemp -d "${TMPDIR:-/tmp}/build-dynatrace.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
rm -f "$BIN/.dynatrace-operator.stamp"
# why there is no binary, for TestOperatorsDynatrace's skip message (removed on success)
NOTBUILT=$BIN/.dynatrace-operator.notbuilt
echo "build-dynatrace.sh $DT_VERSION did not finish (see its output in the run's log)" > "$NOTBUILT"
DIR=$(cd "$TMP" && go mod download -json "$PKG@$DT_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' || true)  # refused: the message below, not a silent set -e exit
[[ -f $DIR/go.mod ]] || { echo "build-dynatrace.sh: cannot download $PKG@$DT_VERSION from $(go env GOPROXY)" >&2; exit 1; }
BOOT_V=$(awk -v m="$BOOT" '$1 == m {print $2}' "$DIR/go.mod")
if ! (cd "$DIR" && go mod download "$BOOT" 2>"$TMP/boot.err"); then
  if [[ -z ${DT_BOOTSTRAPPER_GIT:-} ]]; then
    msg="the module proxy refuses $BOOT@$BOOT_V ($(grep -m1 -o '[0-9][0-9][0-9] [A-Za-z ]*' "$TMP/boot.err" || echo error)), a dependency of dynatrace-operator $DT_VERSION; set DT_BOOTSTRAPPER_GIT to a git clone of https://$BOOT to build it from its tag (checked against go.sum)"
    echo "$msg" > "$NOTBUILT"
    echo "build-dynatrace.sh: $msg" >&2
    exit 1
  fi
  echo "[build-dynatrace] $BOOT@$BOOT_V refused by the proxy: packing tag $BOOT_V of $DT_BOOTSTRAPPER_GIT"
  ENC=$(echo "$BOOT" | sed 's/\([A-Z]\)/!\L\1/g')   # module path case-encoding: D -> !d
  P=$TMP/proxy/$ENC/@v
  mkdir -p "$P" "$TMP/zip/$BOOT@$BOOT_V"
  git --git-dir="$DT_BOOTSTRAPPER_GIT" archive "$BOOT_V" | tar -x -C "$TMP/zip/$BOOT@$BOOT_V"
  (cd "$TMP/zip" && zip -qr -X -D "$P/$BOOT_V.zip" .)
  cp "$TMP/zip/$BOOT@$BOOT_V/go.mod" "$P/$BOOT_V.mod"
  printf '{"Version":"%s","Time":"%s"}\n' "$BOOT_V" \
    "$(git --git-dir="$DT_BOOTSTRAPPER_GIT" log -1 --format=%cI "$BOOT_V")" > "$P/$BOOT_V.info"
  export GOPROXY="file://$TMP/proxy,$(go env GOPROXY)"
  (cd "$DIR" && go mod download "$BOOT")   # verified against go.sum's h1: here
fi
echo "[build-dynatrace] go build $PKG/cmd ($DT_VERSION, $GOV) in $DIR"
(cd "$DIR" && nice -n 10 go build -trimpath -o "$TMP/dynatrace-operator" \
  -ldflags "-s -w -X '$PKG/pkg/version.Version=$DT_VERSION' -X '$PKG/pkg/version.Commit=module-proxy'" ./cmd)
mv "$TMP/dynatrace-operator" "$BIN/dynatrace-operator"
rm -rf "$BIN/dynatrace-operator-samples"
cp -r "$DIR/assets/samples" "$BIN/dynatrace-operator-samples"
chmod -R u+w "$BIN/dynatrace-operator-samples"
echo "$STAMP" > "$BIN/.dynatrace-operator.stamp"
rm -f "$NOTBUILT"
echo "[build-dynatrace] dynatrace-operator $DT_VERSION built in $((SECONDS - t0)) s"
