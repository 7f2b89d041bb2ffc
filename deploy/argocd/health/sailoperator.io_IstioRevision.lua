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
local hs = {}

if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for sail-operator to reconcile the IstioRevision"
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
if reconciled.status == "False" then
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

-- A missing or unhealthy IstioCNI/ZTunnel has its own health; the revision waits for it.
local deps = byType["DependenciesHealthy"]
if deps ~= nil and deps.status ~= "True" then
  hs.status = "Progressing"
  hs.message = detail(deps)
  return hs
end

hs.status = "Healthy"
hs.message = "istiod is ready"
return hs
