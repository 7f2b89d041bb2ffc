-- The shared body of every check olm-cmp health-checks generates (internal/healthcheck,
-- docs/plugin.md "Generated health checks"). The lines above it set `judge`, what the CRD's
-- status schema offers. Argo CD runs each argocd-cm script on its own, without Lua's string
-- library, so words are matched whole, from tables.
--
-- The rule, first match wins:
--   no status, or nothing in it yet              Progressing (waiting for the operator)
--   status.observedGeneration < generation       Progressing (status is for an older spec)
--   a failure condition is True                  Degraded   (Degraded, Failed, Failure, Error, Stalled)
--   status.phase (or state) is a failure word     Degraded   (Failed, Failure, Error, Errored, Degraded)
--   a condition is for an older generation        Progressing
--   a progress condition is True                 Progressing (Progressing, Reconciling, Upgrading, Pending)
--   a readiness condition is not True            Progressing (Ready, Available, Healthy)
--   status.phase is set, not a healthy word      Progressing (healthy: Running, Ready, Succeeded, ...)
--   a readiness condition is True, or the phase is a healthy word: Healthy
--   the schema has a phase, not set yet          Progressing
--   only conditions of other types               Healthy: they say nothing of readiness (as kstatus)
local hs = {}

local function set(status, message)
  hs.status = status
  hs.message = message
  return hs
end

local failureTypes = {Degraded = true, Failed = true, Failure = true, Error = true, Stalled = true}
local progressTypes = {Progressing = true, Reconciling = true, Upgrading = true, Pending = true}
local readyTypes = {Ready = true, Available = true, Healthy = true}

local status = obj.status
if type(status) ~= "table" then
  return set("Progressing", "Waiting for the operator to report the status of this " .. obj.kind)
end

local conditions = {}
if judge.conditions and type(status.conditions) == "table" then
  for _, c in ipairs(status.conditions) do
    if type(c) == "table" and type(c.type) == "string" then
      table.insert(conditions, c)
    end
  end
end

local phase = nil
if judge.phaseField ~= nil and type(status[judge.phaseField]) == "string" and status[judge.phaseField] ~= "" then
  phase = status[judge.phaseField]
end

if #conditions == 0 and phase == nil then
  return set("Progressing", "Waiting for the operator to report the status of this " .. obj.kind)
end

local generation = obj.metadata.generation
local observed = status.observedGeneration
if judge.observedGeneration and type(generation) == "number" and type(observed) == "number" and observed < generation then
  return set("Progressing", "Waiting for the operator to observe generation " .. generation ..
    " (status is for generation " .. observed .. ")")
end

local function detail(c)
  local s = c.type .. " is " .. tostring(c.status)
  if type(c.reason) == "string" and c.reason ~= "" then
    s = s .. " (" .. c.reason .. ")"
  end
  if type(c.message) == "string" and c.message ~= "" then
    s = s .. ": " .. c.message
  end
  return s
end

local function phaseText()
  local s = "status." .. judge.phaseField .. " is " .. phase
  if type(status.message) == "string" and status.message ~= "" then
    s = s .. ": " .. status.message
  end
  return s
end

for _, c in ipairs(conditions) do
  if failureTypes[c.type] and c.status == "True" then
    return set("Degraded", detail(c))
  end
end

if phase ~= nil and judge.degradedPhases[phase] then
  return set("Degraded", phaseText())
end

if judge.conditionGeneration and type(generation) == "number" then
  for _, c in ipairs(conditions) do
    local known = failureTypes[c.type] or progressTypes[c.type] or readyTypes[c.type]
    if known and type(c.observedGeneration) == "number" and c.observedGeneration < generation then
      return set("Progressing", "Waiting for the operator to observe generation " .. generation ..
        " (" .. c.type .. " is for generation " .. c.observedGeneration .. ")")
    end
  end
end

for _, c in ipairs(conditions) do
  if progressTypes[c.type] and c.status == "True" then
    return set("Progressing", detail(c))
  end
end

local ready = nil
for _, c in ipairs(conditions) do
  if readyTypes[c.type] then
    if c.status ~= "True" then
      return set("Progressing", detail(c))
    end
    if ready == nil then
      ready = c
    end
  end
end

if phase ~= nil then
  if not judge.healthyPhases[phase] then
    return set("Progressing", phaseText())
  end
  if ready == nil then
    return set("Healthy", phaseText())
  end
end

if ready ~= nil then
  return set("Healthy", detail(ready))
end

if judge.phaseField ~= nil then
  return set("Progressing", "Waiting for the operator to set status." .. judge.phaseField)
end

local types = ""
for i, c in ipairs(conditions) do
  if i > 1 then
    types = types .. ", "
  end
  types = types .. c.type
end
return set("Healthy", "No readiness condition or phase to wait for (conditions: " .. types .. ")")
