-- Health of sail-operator's IstioRevision (sailoperator.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file). The operator
-- usually creates IstioRevisions for an Istio; they show in the Istio's resource tree.
--
-- Conditions (istio-ecosystem/sail-operator api/v1/istiorevision_types.go,
-- controllers/istiorevision/istiorevision_controller.go determineStatus):
--   Reconciled           False: ReconcileError or NameAlreadyExists (an IstioRevisionTag
--                        has the same name)
--   Ready                False while istiod is not ready (IstiodNotReady, RemoteIstiodNotReady);
--                        Unknown: ReadinessCheckFailed
--   DependenciesHealthy  False while a required IstioCNI or ZTunnel is missing or not healthy
--                        (sail-operator >= 1.1; older versions do not write it)
--   InUse                whether workloads use the revision: not a health signal (an unused
--                        revision is healthy, e.g. during a revision-based update)
-- status.observedGeneration is set on every status update.
-- #include _sail.lua

-- A missing or unhealthy IstioCNI/ZTunnel has its own health; the revision waits for it.
local pending = expect("Reconciled", true) or expect("Ready") or
  expect("DependenciesHealthy", false, nil, true)
if pending ~= nil then
  return pending
end

hs.status = "Healthy"
hs.message = "istiod is ready"
return hs
