-- Health of sail-operator's IstioRevisionTag (sailoperator.io/v1), for
-- deploy/argocd/resource-customizations.yaml (generated from this file).
--
-- Conditions (istio-ecosystem/sail-operator api/v1/istiorevisiontags_types.go,
-- controllers/istiorevisiontag/istiorevisiontag_controller.go determineStatus):
--   Reconciled  False: RefNotFound (the Istio or IstioRevision in spec.targetRef does not
--               exist yet; the operator retries), NameAlreadyExists (an IstioRevision has the
--               same name) or ReconcileError. One ReconcileError is the operator's only
--               TransientError (pkg/revision/references.go): the referenced Istio has no active
--               revision yet, as when the tag and its Istio are created together.
--   InUse       whether workloads use the tag: not a health signal, although the operator's
--               status.state reports NotReferencedByAnything for an unused tag
-- A tag has no Ready condition: it is a set of webhooks and services pointing at a revision.
-- status.observedGeneration is set on every status update.
-- #include _sail.lua

local reconciled = byType["Reconciled"]
if reconciled == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for condition Reconciled"
  return hs
end

local msg = detail(reconciled)

-- Waiting for the referenced Istio (or its first revision) is not a failure: the operator
-- retries, and the Istio may be created in the same sync. Argo CD runs argocd-cm scripts
-- without Lua's string library, so the transient error is recognised by its whole message.
local waiting = reconciled.reason == "RefNotFound" or
  reconciled.message == "error reconciling resource: transient error: referenced Istio has no active revision"
if reconciled.status == "False" and not waiting then
  hs.status = "Degraded"
  hs.message = msg
  return hs
end
if reconciled.status ~= "True" then
  hs.status = "Progressing"
  hs.message = msg
  return hs
end

hs.status = "Healthy"
if obj.status.istioRevision ~= nil and obj.status.istioRevision ~= "" then
  hs.message = "Tag points to IstioRevision " .. obj.status.istioRevision
else
  hs.message = "Tag is reconciled"
end
return hs
