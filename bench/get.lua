-- wrk script of GET /api/v1/projects/{id}: reads project ids (one a line)
-- from the file given after `--` and cycles through them, each thread from
-- its own offset. The requests are formatted once in init, so the load
-- generator does no more work per request than with a fixed URL. An optional
-- second argument is appended to each path (`/videos`: the studio's List
-- Videos, GET /api/v1/projects/{projectId}/videos).
--   wrk -t2 -c64 -d10s --latency -H 'Authorization: Bearer KEY' -s get.lua URL -- IDS_FILE [SUFFIX]

local counter = 0
function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
end

local requests = {}
local n, i = 0, 0

function init(args)
  local path = args[1]
  if not path then error("get.lua: give the ids file after --") end
  local suffix = args[2] or ""
  local f = assert(io.open(path, "r"))
  for id in f:lines() do
    if id ~= "" then
      n = n + 1
      requests[n] = wrk.format("GET", "/api/v1/projects/" .. id .. suffix)
    end
  end
  f:close()
  if n == 0 then error("get.lua: no ids in " .. path) end
  -- threads start at different ids (offset is set by setup)
  i = ((tonumber(offset) or 0) * 7919) % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return requests[i]
end
