#!/usr/bin/env bash
# build-operators.sh - build the manager binaries of real operators, for the `operators` suite,
# from the Go module proxy at the versions their bundles in ../shared/bundles ship, into $E2E_BIN
# (default ~/.cache/olm-cmp/e2e/bin), named as the container runs them (the image's entrypoint or
# the rendered `command`). Per-operator stamp files: a re-run with matching stamps is a no-op.
#
# `go install module/cmd@version` refuses modules with replace directives (all four have some), so
# each module's source is copied from the module cache to $CACHE/src/op-<name> and built there with
# its own go.mod/go.sum (-mod=mod: only missing go.sum lines are fetched). One repair a zip needs:
# a replace pointing into a nested module (which the module zip leaves out) gets that module's
# published version instead. Builds run one at a time under `nice` (a shared 2-core machine); a
# failed build is reported and skipped (the suite skips that operator), it does not stop the others.
#
#   OPERATORS="psmdb source-controller observability-operator crossplane dbaas dynatrace seeds"  which ones
set -euo pipefail
CACHE=${OLM_CMP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/e2e}
BIN=${E2E_BIN:-$CACHE/bin}
export GOFLAGS="-modcacherw -mod=mod" CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}
mkdir -p "$BIN" "$CACHE/src"
GOV=$(go env GOVERSION)
t0=$SECONDS
log() { printf '[operators %4ds] %s\n' $((SECONDS - t0)) "$*"; }

# name | module | version | package (relative) | binary | repair
# psmdb does not build from the proxy today: v1.23.0 requires percona-backup-mongodb at an untagged
# commit (v1.8.1-0.20260617122520-9641a911c853) the proxy refuses (403), and the packages it imports
# (pbm/defs, pbm/ctrl, pbm/topo, ...) are not in the nearest served release, v1.8.1.
SPECS=(
  "psmdb|github.com/percona/percona-server-mongodb-operator|v1.23.0|./cmd/manager|percona-server-mongodb-operator|lumberjack"
  "source-controller|github.com/fluxcd/source-controller|v1.3.0|.|source-controller|flux-api"
  "observability-operator|github.com/rhobs/observability-operator|v0.0.28|./cmd/operator|observability-operator|"
  "crossplane|github.com/crossplane/crossplane|v1.5.1|./cmd/crossplane|crossplane|"
  "dbaas|github.com/RHEcosystemAppEng/dbaas-operator|v0.5.0|.|dbaas-operator|"
)
WANT=${OPERATORS:-psmdb source-controller observability-operator crossplane dbaas}

repair() { # kind dir
  case $1 in
    lumberjack) # ./cmd/mongodb-healthcheck/logger/lumberjack is a nested module (not in the zip);
      # only the healthcheck binary uses it, the manager does not
      (cd "$2" && go mod edit -dropreplace=gopkg.in/natefinch/lumberjack.v2@v2.2.1) ;;
    flux-api) # ./api is the nested module github.com/fluxcd/source-controller/api, published at the
      # version go.mod requires
      (cd "$2" && go mod edit -dropreplace=github.com/fluxcd/source-controller/api) ;;
    "") ;;
  esac
}

failed=()
for spec in "${SPECS[@]}"; do
  IFS='|' read -r name mod ver pkg bin fix <<<"$spec"
  [[ " $WANT " == *" $name "* ]] || continue
  stamp="$name=$mod@$ver go=$GOV recipe=1"
  if [[ -x $BIN/$bin && -f $BIN/.op-$name.stamp && $(cat "$BIN/.op-$name.stamp") == "$stamp" ]]; then
    log "$name $ver: cached"
    continue
  fi
  s0=$SECONDS
  # a refused module makes `go mod download` fail: that must reach the check below, not set -e
  dir=$(go mod download -json "$mod@$ver" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p' || true)
  if [[ ! -d $dir ]]; then
    log "$name $ver: NOT BUILT: the module proxy does not serve $mod@$ver"; failed+=("$name"); continue
  fi
  W=$CACHE/src/op-$name
  rm -rf "$W"; cp -r "$dir" "$W"; chmod -R u+w "$W"
  repair "$fix" "$W"
  log "go build $name ($mod $ver, $pkg)"
  rm -f "$BIN/.op-$name.stamp"
  if (cd "$W" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$BIN/$bin" "$pkg") > "$CACHE/src/op-$name.log" 2>&1; then
    echo "$stamp" > "$BIN/.op-$name.stamp"
    log "$name $ver: built in $((SECONDS - s0)) s -> $BIN/$bin"
  else
    log "$name $ver: NOT BUILT ($((SECONDS - s0)) s): $(grep -v '^go: downloading' "$CACHE/src/op-$name.log" | head -5 | tr '\n' ' ')"
    failed+=("$name")
  fi
done
# dynatrace-operator (webhooks_test.go): its own script, one dependency needs a second source
if [[ -z ${OPERATORS:-} || " $WANT " == *" dynatrace "* ]]; then
  # a failure (CI's proxy refuses its dependency dynatrace-bootstrapper) is reported, never fatal:
  # TestOperatorsDynatrace then skips with the reason build-dynatrace.sh left in .dynatrace-operator.notbuilt
  "$(dirname "${BASH_SOURCE[0]}")/build-dynatrace.sh" || { log "dynatrace-operator: NOT BUILT (above)"; failed+=("dynatrace"); }
fi
# the seed operators (seeds_test.go): from ../shared/seedsrc, their own script (it says why when
# it builds nothing, and leaves the reason for the suite)
if [[ -z ${OPERATORS:-} || " $WANT " == *" seeds "* ]]; then
  "$(dirname "${BASH_SOURCE[0]}")/build-seeds.sh" || { log "seed operators: NOT BUILT (above)"; failed+=("seeds"); }
fi
((${#failed[@]} == 0)) || log "not built: ${failed[*]} (the suite skips them; logs in $CACHE/src/op-*.log)"
log "operator binaries in $BIN"
