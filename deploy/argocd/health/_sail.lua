-- Shared start of the sail-operator checks (sailoperator.io_*.lua), put in
-- place of their "-- #include _sail.lua" line when
-- deploy/argocd/resource-customizations.yaml is generated: Argo CD runs every
-- argocd-cm script on its own, with nothing to load.
--
-- No status yet, or status for an older generation: Progressing. Otherwise
-- byType maps condition types to conditions, detail(c) describes one, and
-- expect(...) judges one that must be True.
local hs = {}

if obj.status == nil or obj.status.conditions == nil or #obj.status.conditions == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for sail-operator to reconcile the " .. obj.kind
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

-- expect returns the health when condition typ is not True, nil when it is:
-- Degraded when it is False and failIfFalse, unless its reason is waitReason
-- (a state the operator waits out); Progressing otherwise, and while it is
-- missing, unless optional (sail-operator 1.0 does not write every condition).
local function expect(typ, failIfFalse, waitReason, optional)
  local c = byType[typ]
  if c == nil then
    if optional then
      return nil
    end
    hs.status = "Progressing"
    hs.message = "Waiting for condition " .. typ
    return hs
  end
  if c.status == "True" then
    return nil
  end
  if c.status == "False" and failIfFalse and c.reason ~= waitReason then
    hs.status = "Degraded"
  else
    hs.status = "Progressing"
  end
  hs.message = detail(c)
  return hs
end
