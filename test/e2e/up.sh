#!/usr/bin/env bash
# up.sh - start the e2e control plane: etcd + kube-apiserver + kube-controller-manager +
# kube-scheduler + kwok (fake nodes whose pods become Ready at once), all on 127.0.0.1.
#
# Meant to run inside a private network namespace (run.sh does `unshare -n`), where the
# ordinary CIDRs below are safe: nothing routes out, so webhook/APIService calls to Service IPs
# fail fast with "network is unreachable" and never leave the machine.
#
#   E2E_BIN   binaries from build.sh (default ~/.cache/olm-cmp/e2e/bin)
#   RUN       state dir: pki/, etcd/, logs/, pids/, kubeconfig (required; run.sh uses a temp dir)
#   SERVICE_CIDR=10.96.0.0/24 POD_CIDR=10.244.0.0/16 APISERVER_PORT=6443 FAKE_NODES=1
# Writes $RUN/kubeconfig and $RUN/pids/<name>.pid (down.sh stops exactly those PIDs).
set -euo pipefail
CACHE=${OLM_CMP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-cmp/e2e}
BIN=${E2E_BIN:-$CACHE/bin}
: "${RUN:?set RUN to a state directory}"
APISERVER_PORT=${APISERVER_PORT:-6443}
ETCD_PORT=${ETCD_PORT:-2379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-2380}
KCM_PORT=${KCM_PORT:-10257}
SCHED_PORT=${SCHED_PORT:-10259}
KWOK_PORT=${KWOK_PORT:-10247}
FAKE_NODES=${FAKE_NODES:-1}
SERVICE_CIDR=${SERVICE_CIDR:-10.96.0.0/24}
POD_CIDR=${POD_CIDR:-10.244.0.0/16}
# etcd's default 1.5 MiB request cap rejects the biggest CRDs of the corpus (eclipse-che: 2 MiB)
ETCD_MAX_REQUEST_BYTES=${ETCD_MAX_REQUEST_BYTES:-10485760}

t0=$(date +%s%N)
log() { printf '[up %5dms] %s\n' $(( ($(date +%s%N) - t0) / 1000000 )) "$*"; }
die() { echo "up.sh: $*" >&2; exit 1; }

for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl; do
  [[ -x $BIN/$b ]] || die "missing $BIN/$b: run test/e2e/build.sh first"
done
export PATH=$BIN:$PATH
if [[ -d $RUN/pids ]]; then
  for f in "$RUN"/pids/*.pid; do
    [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && die "already running ($f): run down.sh first"
  done
fi
mkdir -p "$RUN"/{pki,logs,pids}
PKI=$RUN/pki
export KUBECONFIG=$RUN/kubeconfig

# ------------------------------------------------------------------ PKI + kubeconfig (once per RUN)
if [[ ! -f $PKI/admin.crt ]]; then
  (
    cd "$PKI"
    key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }
    ca() { # name CN
      key "$1.key"
      openssl req -x509 -new -key "$1.key" -sha256 -days 3650 -subj "/CN=$2" -out "$1.crt" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
    }
    leaf() { # name subject ca extfile
      key "$1.key"
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
      openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial -days 3650 -sha256 \
        -extfile "$4" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr"
    }
    ca ca olm-cmp-e2e-ca
    ca front-proxy-ca olm-cmp-e2e-front-proxy-ca
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth" \
      "subjectAltName=IP:127.0.0.1,IP:${SERVICE_CIDR%.0/*}.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" > server.ext
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth" > client.ext
    leaf apiserver "/CN=kube-apiserver" ca server.ext
    leaf admin "/O=system:masters/CN=olm-cmp-e2e-admin" ca client.ext     # system:masters: cluster-admin
    leaf front-proxy-client "/CN=front-proxy-client" front-proxy-ca client.ext
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
  cat > "$KUBECONFIG" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:${APISERVER_PORT}
    certificate-authority-data: $(base64 -w0 < "$PKI/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(base64 -w0 < "$PKI/admin.crt")
    client-key-data: $(base64 -w0 < "$PKI/admin.key")
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
KC
  log "PKI + kubeconfig generated"
fi

start() { # name cmd...  (setsid: a Ctrl-C in the terminal reaches run.sh's trap, not the servers)
  local name=$1; shift
  setsid "$@" >"$RUN/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN/pids/$name.pid"
}
wait_for() { # what timeout_s cmd...
  local what=$1 end=$(( $(date +%s) + $2 )); shift 2
  until "$@" >/dev/null 2>&1; do
    [[ $(date +%s) -lt $end ]] || die "timeout waiting for $what (logs: $RUN/logs)"
    sleep 0.2
  done
}
api() { curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://127.0.0.1:${APISERVER_PORT}$1"; }

# ------------------------------------------------------------------ etcd (no fsync: throwaway data)
start etcd "$BIN/etcd" --name=e2e --data-dir="$RUN/etcd" \
  --listen-client-urls="http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls="http://127.0.0.1:${ETCD_PORT}" \
  --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
  --initial-cluster="e2e=http://127.0.0.1:${ETCD_PEER_PORT}" --log-level=warn --unsafe-no-fsync \
  --quota-backend-bytes=$((4*1024*1024*1024)) --max-request-bytes="$ETCD_MAX_REQUEST_BYTES"
wait_for etcd 30 curl -sf "http://127.0.0.1:${ETCD_PORT}/health"
log "etcd ready"

# ------------------------------------------------------------------ kube-apiserver
start kube-apiserver "$BIN/kube-apiserver" \
  --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" --advertise-address=127.0.0.1 \
  --etcd-servers="http://127.0.0.1:${ETCD_PORT}" \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
  --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-cluster-ip-range="$SERVICE_CIDR" --authorization-mode=Node,RBAC --allow-privileged=true \
  --endpoint-reconciler-type=none --profiling=false --v=1
wait_for kube-apiserver 90 api /readyz
log "kube-apiserver ready ($(api /version | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p'))"

# ------------------------------------------------------------------ controller-manager, scheduler
start kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
  --service-cluster-ip-range="$SERVICE_CIDR" --use-service-account-credentials=false --profiling=false --v=1
start kube-scheduler "$BIN/kube-scheduler" \
  --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
  --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --leader-elect=false --profiling=false --v=1

# ------------------------------------------------------------------ kwok: fake nodes + pods
# Node heartbeats through Leases (else the node goes NotReady after ~50 s and Deployments lose
# availability); pods on kwok nodes turn Running/Ready at once. No taint on the nodes, so the
# operators' unmodified Deployments schedule onto them; the nodes carry the control-plane, master
# and worker role labels, since operators pin themselves to one of those (virt-operator,
# windows-machine-config-operator).
STAGES=()
for f in "$BIN"/kwok-stages/*.yaml; do STAGES+=(--config="$f"); done
start kwok "$BIN/kwok" --kubeconfig="$KUBECONFIG" "${STAGES[@]}" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --cidr="$POD_CIDR" --node-ip=127.0.0.1 --node-lease-duration-seconds=40 \
  --server-address="127.0.0.1:${KWOK_PORT}"
for i in $(seq 0 $((FAKE_NODES - 1))); do
  cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok, node-role.kubernetes.io/control-plane: "", node-role.kubernetes.io/master: "", node-role.kubernetes.io/worker: ""}
status:
  allocatable: {cpu: "64", memory: 256Gi, pods: "500"}
  capacity: {cpu: "64", memory: 256Gi, pods: "500"}
NODE
done | kubectl apply -f - >/dev/null
ready() { [[ $(kubectl get node kwok-node-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
wait_for "kwok node Ready" 60 ready
log "kwok node(s) Ready"
# the default ServiceAccount (made by KCM) gates pod admission
wait_for "default ServiceAccount" 60 kubectl get serviceaccount default -n default
log "cluster ready: KUBECONFIG=$KUBECONFIG"
