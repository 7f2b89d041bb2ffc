-- Health of sail-operator's IstioCNI (sailoperator.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- Conditions (istio-ecosystem/sail-operator api/v1/istiocni_types.go,
-- controllers/istiocni/istiocni_controller.go determineStatus, pkg/reconciler/readiness.go):
--   Reconciled  False (ReconcileError) when installing the istio-cni-node chart failed
--   Ready       False (DaemonSetNotReady) while the istio-cni-node DaemonSet is missing, has no pod
--               scheduled or not all its pods ready; Unknown (ReadinessCheckFailed)
-- status.observedGeneration is set on every status update.
local hs = {}

if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for sail-operator to reconcile the IstioCNI"
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

hs.status = "Healthy"
hs.message = "All istio-cni-node pods are ready"
return hs
