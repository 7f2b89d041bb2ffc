-- Health of sail-operator's Istio (sailoperator.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- The operator copies the conditions of the active IstioRevision into the Istio
-- (istio-ecosystem/sail-operator controllers/istio/istio_controller.go determineStatus,
-- api/v1/istio_types.go, api/v1/istiorevision_types.go):
--   Reconciled           False: ReconcileError or NameAlreadyExists (the operator failed),
--                        ActiveRevisionNotFound (the IstioRevision it creates is not there yet);
--                        Unknown: FailedToGetActiveRevision, or the revision has no status yet
--   Ready                False while istiod is not ready (IstiodNotReady, RemoteIstiodNotReady)
--   DependenciesHealthy  False while a required IstioCNI or ZTunnel is missing or not healthy
--                        (sail-operator >= 1.1; older versions do not write it)
-- status.observedGeneration is set on every status update.
-- #include _sail.lua

-- ActiveRevisionNotFound: the IstioRevision was just created. A missing or unhealthy
-- IstioCNI/ZTunnel (DependenciesHealthy) is another resource, with its own health; it may be
-- created later in the same sync, so Istio waits rather than failing the sync.
local pending = expect("Reconciled", true, "ActiveRevisionNotFound") or expect("Ready") or
  expect("DependenciesHealthy", false, nil, true)
if pending ~= nil then
  return pending
end

hs.status = "Healthy"
if obj.status.activeRevisionName ~= nil and obj.status.activeRevisionName ~= "" then
  hs.message = "Istio control plane is ready (active revision " .. obj.status.activeRevisionName .. ")"
else
  hs.message = "Istio control plane is ready"
end
return hs
