-- Health of lws-operator's LeaderWorkerSetOperator (operator.openshift.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- status is openshift/api operator/v1 OperatorStatus. Conditions written by the operator
-- (openshift/lws-operator pkg/operator/target_config_reconciler.go, pkg/operator/starter.go):
--   Available                       True when the operand Deployment lws-controller-manager
--                                   has all its replicas available; False (DeploymentUnavailable)
--                                   otherwise
--   Degraded                        True (MissingDependency) when cert-manager's API is absent;
--                                   False (AsExpected) after a complete sync
--   TargetConfigControllerDegraded  True (SyncError) while the operator's sync fails, e.g. while
--                                   cert-manager has not yet issued the webhook certificate
--                                   (a few seconds after install: see docs/plugin.md)
-- The operator never sets status.observedGeneration.
--
-- Argo CD runs argocd-cm scripts without Lua's string library (unless useOpenLibs is set), so
-- condition types are matched by their full names, not by suffix.
local hs = {}

if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for lws-operator to report status"
  return hs
end

-- OperatorStatus has observedGeneration; honour it should a later operator set it.
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for lws-operator to observe generation " .. generation ..
    " (status is for generation " .. observed .. ")"
  return hs
end

local byType = {}
for _, c in ipairs(obj.status.conditions) do
  if c.type ~= nil then
    byType[c.type] = c
  end
end

local function detail(c)
  if c.message ~= nil and c.message ~= "" then
    return c.type .. ": " .. c.message
  end
  if c.reason ~= nil and c.reason ~= "" then
    return c.type .. ": " .. c.reason
  end
  return c.type .. " is " .. tostring(c.status)
end

for _, t in ipairs({"Degraded", "TargetConfigControllerDegraded"}) do
  local c = byType[t]
  if c ~= nil and c.status == "True" then
    hs.status = "Degraded"
    hs.message = detail(c)
    return hs
  end
end

local available = byType["Available"]
if available == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for condition Available"
  return hs
end
if available.status ~= "True" then
  hs.status = "Progressing"
  hs.message = detail(available)
  return hs
end

hs.status = "Healthy"
hs.message = "The LeaderWorkerSet controller Deployment is available"
return hs
