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
local hs = {}

if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for sail-operator to reconcile the Istio"
  return hs
end

local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for sail-operator to observe generation " .. generation ..
    " (status is for generation " .. tostring(observed) .. ")"
  return hs
end

local byType = {}
for _, c in ipairs(obj.status.conditions) do
  if c.type ~= nil then
    byType[c.type] = c
  end
end

local function detail(c)
  local s = c.type .. " is " .. tostring(c.status)
  if c.reason ~= nil and c.reason ~= "" then
    s = s .. " (" .. c.reason .. ")"
  end
  if c.message ~= nil and c.message ~= "" then
    s = s .. ": " .. c.message
  end
  return s
end

local reconciled = byType["Reconciled"]
if reconciled == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for condition Reconciled"
  return hs
end
if reconciled.status == "False" and reconciled.reason ~= "ActiveRevisionNotFound" then
  hs.status = "Degraded"
  hs.message = detail(reconciled)
  return hs
end
if reconciled.status ~= "True" then
  hs.status = "Progressing"
  hs.message = detail(reconciled)
  return hs
end

local ready = byType["Ready"]
if ready == nil or ready.status ~= "True" then
  hs.status = "Progressing"
  hs.message = ready == nil and "Waiting for condition Ready" or detail(ready)
  return hs
end

-- A missing or unhealthy IstioCNI/ZTunnel is another resource, with its own health; it may
-- be created later in the same sync, so Istio waits rather than failing the sync.
local deps = byType["DependenciesHealthy"]
if deps ~= nil and deps.status ~= "True" then
  hs.status = "Progressing"
  hs.message = detail(deps)
  return hs
end

hs.status = "Healthy"
if obj.status.activeRevisionName ~= nil and obj.status.activeRevisionName ~= "" then
  hs.message = "Istio control plane is ready (active revision " .. obj.status.activeRevisionName .. ")"
else
  hs.message = "Istio control plane is ready"
end
return hs
