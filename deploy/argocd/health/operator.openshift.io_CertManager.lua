-- Health of cert-manager-operator's CertManager (operator.openshift.io/v1alpha1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- status is openshift/api operator/v1 OperatorStatus. The operator runs library-go controllers
-- that each write their own conditions, named after the controller
-- (openshift/cert-manager-operator pkg/controller/certmanager/*.go, library-go
-- deploymentcontroller and staticresourcecontroller):
--   cert-manager-<c>-deploymentAvailable    True once the Deployment has an available replica
--   cert-manager-<c>-deploymentProgressing  True while the Deployment rolls out
--   cert-manager-<c>-deploymentDegraded     True (SyncError) when the controller's sync fails,
--                                           e.g. invalid overrides, or progressing too long
--   cert-manager-<c>-static-resources-Degraded  True when applying <c>'s static objects fails
-- for <c> in controller, webhook, cainjector (and networkpolicy for static resources only).
-- The operator never sets status.observedGeneration: a spec change is not visible here until
-- the conditions change.
--
-- Argo CD runs argocd-cm scripts without Lua's string library (unless useOpenLibs is set), so
-- condition types are matched by their full names, not by suffix.
local operator = "cert-manager-operator"
-- #include _openshift.lua

local components = {"controller", "webhook", "cainjector"}
local staticResources = {"controller", "webhook", "cainjector", "networkpolicy"}

-- Degraded first: a failing sync outranks a rollout in progress.
local degraded = {}
for _, c in ipairs(components) do
  table.insert(degraded, "cert-manager-" .. c .. "-deploymentDegraded")
end
for _, c in ipairs(staticResources) do
  table.insert(degraded, "cert-manager-" .. c .. "-static-resources-Degraded")
end
local failing = firstTrue(degraded)
if failing ~= nil then
  hs.status = "Degraded"
  hs.message = detail(failing)
  return hs
end

-- cert-manager works only when all three Deployments are available and settled.
for _, name in ipairs(components) do
  local prefix = "cert-manager-" .. name .. "-deployment"
  local waiting = notYetTrue(prefix .. "Available")
  if waiting ~= nil then
    hs.status = "Progressing"
    hs.message = waiting
    return hs
  end
  local progressing = byType[prefix .. "Progressing"]
  if progressing ~= nil and progressing.status == "True" then
    hs.status = "Progressing"
    hs.message = detail(progressing)
    return hs
  end
end

hs.status = "Healthy"
hs.message = "cert-manager controller, webhook and cainjector Deployments are available"
return hs
