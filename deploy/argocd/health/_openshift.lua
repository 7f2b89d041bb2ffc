-- Shared start of the checks of operators built on openshift/library-go's
-- OperatorStatus (operator.openshift.io_*.lua), put in place of their
-- "-- #include _openshift.lua" line when
-- deploy/argocd/resource-customizations.yaml is generated: Argo CD runs every
-- argocd-cm script on its own, with nothing to load. The including script sets
-- `operator` (its name in messages) first.
--
-- No status yet, or status for an older generation: Progressing. Otherwise
-- byType maps condition types to conditions, detail(c) describes one,
-- firstTrue(types) is the first condition of types that is True, and
-- notYetTrue(t) says why condition t is not True yet (nil once it is).
local hs = {}

if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for " .. operator .. " to report status"
  return hs
end

-- OperatorStatus has observedGeneration; honour it should a later operator set it.
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for " .. operator .. " to observe generation " .. generation ..
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

local function firstTrue(types)
  for _, t in ipairs(types) do
    local c = byType[t]
    if c ~= nil and c.status == "True" then
      return c
    end
  end
  return nil
end

local function notYetTrue(t)
  local c = byType[t]
  if c == nil then
    return "Waiting for condition " .. t
  end
  if c.status ~= "True" then
    return detail(c)
  end
  return nil
end
