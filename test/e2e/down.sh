#!/usr/bin/env bash
# down.sh - stop what up.sh (and the e2e harness) recorded in $RUN/pids, never anything by name.
# Each PID's command line is checked before signalling (PID reuse). SIGTERM, SIGKILL after
# STOP_TIMEOUT_S. Dependents first (kwok, scheduler, KCM, any extra *.pid), then the apiserver,
# then etcd.   --purge also removes $RUN.
set -uo pipefail
: "${RUN:?set RUN to the state directory up.sh used}"
STOP_TIMEOUT_S=${STOP_TIMEOUT_S:-10}

ours() { # pid name: alive and still running a command line containing name
  kill -0 "$1" 2>/dev/null && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"
}
alive() { [[ -r /proc/$1/stat && $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }
stop() { # names...
  local name f pid pids=() names=()
  for name in "$@"; do
    f=$RUN/pids/$name.pid
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    if ours "$pid" "$name"; then kill -TERM "$pid" 2>/dev/null && pids+=("$pid") && names+=("$name"); fi
    rm -f "$f"
  done
  local end=$(( $(date +%s) + STOP_TIMEOUT_S )) i
  for i in "${!pids[@]}"; do
    while alive "${pids[$i]}" && [[ $(date +%s) -lt $end ]]; do sleep 0.05; done
    if alive "${pids[$i]}"; then kill -KILL "${pids[$i]}" 2>/dev/null; echo "down: killed ${names[$i]}"; fi
  done
}
[[ -d $RUN/pids ]] || exit 0
extra=()
for f in "$RUN"/pids/*.pid; do
  [[ -f $f ]] || continue
  n=$(basename "$f" .pid)
  case $n in etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok) ;; *) extra+=("$n");; esac
done
stop "${extra[@]}"
stop kwok kube-scheduler kube-controller-manager
stop kube-apiserver
stop etcd
echo "down: stopped"
[[ ${1:-} == --purge ]] && rm -rf "$RUN"
exit 0
