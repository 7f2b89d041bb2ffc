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
local operator = "lws-operator"
-- #include _openshift.lua

local failing = firstTrue({"Degraded", "TargetConfigControllerDegraded"})
if failing ~= nil then
  hs.status = "Degraded"
  hs.message = detail(failing)
  return hs
end

local waiting = notYetTrue("Available")
if waiting ~= nil then
  hs.status = "Progressing"
  hs.message = waiting
  return hs
end

hs.status = "Healthy"
hs.message = "The LeaderWorkerSet controller Deployment is available"
return hs
