-- POSTs the same JSON body (the file named by PM_BODY_FILE) on every
-- request: after the first, each one is a cache hit.
local f = assert(io.open(os.getenv("PM_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
wrk.headers["Content-Type"] = "application/json"
f:close()
