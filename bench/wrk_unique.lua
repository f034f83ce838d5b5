-- POSTs a new request every time: PM_BODY_TEMPLATE with its %d replaced by
-- a number unique over all wrk threads, so every request is a cache miss.
local template = assert(os.getenv("PM_BODY_TEMPLATE"))
local counter = 0
local id = 0
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  id = wrk.thread:get("id") or 0
end

function request()
  counter = counter + 1
  local body = string.format(template, id * 10000000 + counter)
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
