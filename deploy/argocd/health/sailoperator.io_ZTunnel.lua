-- Health of sail-operator's ZTunnel (sailoperator.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- Conditions (istio-ecosystem/sail-operator api/v1/ztunnel_types.go,
-- controllers/ztunnel/ztunnel_controller.go determineStatus, pkg/reconciler/readiness.go):
--   Reconciled  False (ReconcileError) when installing the ztunnel chart failed
--   Ready       False (DaemonSetNotReady) while the ztunnel DaemonSet is missing, has no pod
--               scheduled or not all its pods ready; Unknown (ReadinessCheckFailed)
-- status.observedGeneration is set on every status update.
-- #include _sail.lua

local pending = expect("Reconciled", true) or expect("Ready")
if pending ~= nil then
  return pending
end

hs.status = "Healthy"
hs.message = "All ztunnel pods are ready"
return hs
