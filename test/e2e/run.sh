#!/usr/bin/env bash
# run.sh - the whole end-to-end run (`make e2e`):
#   1. outside any namespace (needs the Go module proxy / apt): build the control plane
#      (build.sh, cached), olm-cmp from this checkout (and, for the Argo CD suites, its image as
#      `make image` builds it, for this machine's architecture), the e2e test binary, for the operators
#      suite the real operators (build-operators.sh, cached), and, for the Argo CD suites and the
#      operators suite, Argo CD + redis-server (test/argocd/build-argocd.sh v3, and v2 for argocd-v2);
#   2. re-executes itself under `unshare -n` (a private network namespace with only loopback),
#      and there, for each suite, starts a fresh control plane (up.sh), runs the suite's Go tests,
#      and always tears the cluster down (trap -> down.sh).
#
#   E2E_SUITES="upgrade corpus argocd operators"  suites to run (each on its own fresh cluster; corpus
#                     is two steps, the API-server oracle then the applies, each on a fresh one); also
#                     oracle (the corpus suite's first step alone) and
#                     argocd-v2 (optional, not in the default: the lws-operator sync, a bump and
#                     classic mode on Argo CD 2.14.21, which costs a second Argo CD build)
#   E2E_KEEP=1        keep the work dir (logs, rendered streams) even on success
#   E2E_TEST_ARGS     extra args for the test binary, for every step (e.g. "-test.run ^TestCorpus$/shared/flux")
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${OLM_CMP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/e2e}
export OLM_CMP_E2E_CACHE=$CACHE
export E2E_BIN=${E2E_BIN:-$CACHE/bin}
export ARGOCD_BIN=${ARGOCD_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/argocd-v3/bin}
export ARGOCD_V2_BIN=${ARGOCD_V2_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/argocd/bin}
SUITES=${E2E_SUITES:-upgrade corpus argocd operators}

if [[ ${1:-} != --in-netns ]]; then
  t0=$SECONDS
  export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
  "$HERE/build.sh"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/olm-cmp-e2e.XXXXXX")
  export E2E_WORK=$WORK
  mkdir -p "$WORK/bin"
  echo "== go build olm-cmp and olm-cmp-check (this checkout) -> $WORK/bin/"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/bin/" ./cmd/olm-cmp ./cmd/olm-cmp-check)
  if [[ " $SUITES " == *" argocd"* || " $SUITES " == *" operators "* ]]; then
    # the image make image builds (hack/ociimage), for this machine only: the Argo CD suites run
    # olm-cmp's sidecar from its root filesystem, with deploy/'s container spec (hack/sidecar)
    echo "== image (hack/ociimage, linux/$(go env GOARCH)) -> $WORK/oci"
    (cd "$ROOT" && SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0) \
      go run ./hack/cmd/ociimage build -out "$WORK/oci" -platforms "linux/$(go env GOARCH)" -version e2e >"$WORK/image.log" 2>&1) \
      || { cat "$WORK/image.log"; echo "image build failed"; exit 1; }
    export E2E_OCI_LAYOUT=$WORK/oci
  fi
  echo "== go test -c (test/e2e)"
  (cd "$HERE" && go test -c -o "$WORK/bin/e2e.test" .)
  if [[ " $SUITES " == *" corpus "* || " $SUITES " == *" oracle "* ]]; then
    # the API-server oracle's first half (TestCorpusOracle judges them): every object olm-cmp
    # renders for the corpus up to the validate step, with that step's verdict on each
    echo "== oracle candidates (internal/render TestOracleCandidates) -> $WORK/oracle"
    (cd "$ROOT" && OLM_CMP_ORACLE_OUT=$WORK/oracle OLM_CMP_SHARED=${OLM_CMP_SHARED:-$ROOT/../shared} \
      go test -count=1 -run '^TestOracleCandidates$' ./internal/render >"$WORK/oracle-candidates.log" 2>&1) \
      || { cat "$WORK/oracle-candidates.log"; echo "oracle candidates failed"; exit 1; }
    export E2E_ORACLE_DIR=$WORK/oracle
  fi
  if [[ " $SUITES " == *" operators "* ]]; then
    "$HERE/build-operators.sh"   # real operators' binaries: the module proxy's, and the seeds' from ../shared/seedsrc (cached, stamped)
  fi
  if [[ " $SUITES " == *" argocd "* || " $SUITES " == *" operators "* ]]; then
    ARGOCD_BIN=$ARGOCD_BIN "$ROOT/test/argocd/build-argocd.sh" v3
  fi
  if [[ " $SUITES " == *" argocd-v2 "* ]]; then
    ARGOCD_BIN=$ARGOCD_V2_BIN "$ROOT/test/argocd/build-argocd.sh" v2
  fi
  echo "== builds done in $((SECONDS - t0)) s"
  if [[ $(id -u) == 0 ]]; then NS=(unshare -n); else NS=(unshare -r -n); fi
  exec "${NS[@]}" -- "$0" --in-netns
fi

# ------------------------------------------------------------------ inside the network namespace
WORK=${E2E_WORK:?}
ip link set lo up
export PATH=$E2E_BIN:$WORK/bin:$PATH
export OLM_CMP_BIN=$WORK/bin/olm-cmp OLM_CMP_REPO=$ROOT
export OLM_CMP_SHARED=${OLM_CMP_SHARED:-$ROOT/../shared}
RUN=
teardown() {
  local rc=$?
  [[ -n $RUN ]] && RUN=$RUN "$HERE/down.sh" >/dev/null 2>&1
  if [[ $rc != 0 || ${E2E_KEEP:-0} == 1 ]]; then
    echo "== e2e work dir kept: $WORK (cluster logs in run-*/logs)"
  else
    rm -rf "$WORK"
  fi
  exit $rc
}
trap teardown EXIT
trap 'exit 130' INT TERM

# a suite is one or more steps (test patterns), each on its own fresh control plane: corpus is
# the API-server oracle (TestCorpusOracle: dry runs, and the CRDs and namespaces they need),
# then the applies (TestCorpus); oracle is the first step alone; operators runs the real
# operators, then the seed operators through Argo CD, lws-operator and cert-manager-operator's
# bump each on its own cluster (their cluster-scoped objects and CRs would meet the first step's,
# and cert-manager's webhook, which no binary serves here, would refuse lws-operator's Issuer)
declare -A RUNPAT=([upgrade]='^TestUpgrade$' [corpus]='^TestCorpusOracle$ ^TestCorpus$' [oracle]='^TestCorpusOracle$' [argocd]='^TestArgoCD(Signatures|Tenancy|PrivateRegistry)?$' [argocd-v2]='^TestArgoCDV2$' [operators]='^TestOperators(Dynatrace|DBaaS|Seeds)?$ ^TestOperatorsSeedsArgoCD$ ^TestOperatorsSeedsArgoCDBump$')
failed=()
for suite in $SUITES; do
  [[ -n ${RUNPAT[$suite]:-} ]] || { echo "unknown suite $suite (upgrade corpus oracle argocd operators argocd-v2)"; exit 2; }
  s0=$SECONDS
  ok=1 step=0
  for pat in ${RUNPAT[$suite]}; do
    RUN=$WORK/run-$suite
    if ((step)); then RUN+=-$step; fi
    step=$((step + 1))
    echo "== suite $suite ($pat): fresh control plane"
    RUN=$RUN "$HERE/up.sh"
    export KUBECONFIG=$RUN/kubeconfig E2E_RUN=$RUN
    # shellcheck disable=SC2086
    (cd "$HERE" && "$WORK/bin/e2e.test" -test.v -test.timeout 60m -test.run "$pat" ${E2E_TEST_ARGS:-}) || ok=0
    RUN=$RUN "$HERE/down.sh"
    RUN=
  done
  if ((ok)); then
    echo "== suite $suite: PASS in $((SECONDS - s0)) s"
  else
    echo "== suite $suite: FAIL in $((SECONDS - s0)) s"; failed+=("$suite")
  fi
done
if ((${#failed[@]})); then echo "== e2e FAILED: ${failed[*]}"; exit 1; fi
echo "== e2e passed: $SUITES"
