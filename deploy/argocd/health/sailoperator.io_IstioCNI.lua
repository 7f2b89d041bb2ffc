-- Health of sail-operator's IstioCNI (sailoperator.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- Conditions (istio-ecosystem/sail-operator api/v1/istiocni_types.go,
-- controllers/istiocni/istiocni_controller.go determineStatus, pkg/reconciler/readiness.go):
--   Reconciled  False (ReconcileError) when installing the istio-cni-node chart failed
--   Ready       False (DaemonSetNotReady) while the istio-cni-node DaemonSet is missing, has no pod
--               scheduled or not all its pods ready; Unknown (ReadinessCheckFailed)
-- status.observedGeneration is set on every status update.
-- #include _sail.lua

local pending = expect("Reconciled", true) or expect("Ready")
if pending ~= nil then
  return pending
end

hs.status = "Healthy"
hs.message = "All istio-cni-node pods are ready"
return hs
