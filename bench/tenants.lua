-- wrk script of bench/sandboxes: reads tenants (one "API_KEY PROJECT_ID" a
-- line) from the file given after `--` and cycles through the requests
-- GET /api/v1/projects/{id} and GET /api/v1/balance of each tenant in turn,
-- each with its tenant's key, each thread from its own offset. The requests
-- are formatted once in init, so one tenant or a hundred cost wrk the same.
--   wrk -t2 -c64 -d10s --latency -s tenants.lua URL -- TENANTS_FILE

local counter = 0
function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
end

local requests = {}
local n, i = 0, 0

function init(args)
  local path = args[1]
  if not path then error("tenants.lua: give the tenants file after --") end
  local f = assert(io.open(path, "r"))
  for line in f:lines() do
    local key, id = line:match("^(%S+)%s+(%S+)$")
    if key then
      local h = { Authorization = "Bearer " .. key }
      n = n + 1
      requests[n] = wrk.format("GET", "/api/v1/projects/" .. id, h)
      h = { Authorization = "Bearer " .. key }
      n = n + 1
      requests[n] = wrk.format("GET", "/api/v1/balance", h)
    end
  end
  f:close()
  if n == 0 then error("tenants.lua: no tenants in " .. path) end
  -- threads start at different tenants (offset is set by setup)
  i = math.floor((((tonumber(offset) or 0) * 7919) % n) / 2) * 2
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return requests[i]
end
