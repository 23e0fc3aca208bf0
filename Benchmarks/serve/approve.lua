-- wrk script: each request approves the next pending low-stakes action of this thread
-- (b<RUN>-<thread>-<n>, proposed beforehand by bench_serve.sh). Env: TOKEN, RUN.
local counter = 0
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  n = 0
  run = os.getenv("RUN")
  headers = { ["Authorization"] = "Bearer " .. os.getenv("TOKEN") }
end

function request()
  n = n + 1
  return wrk.format("POST", "/v1/actions/b" .. run .. "-" .. tid .. "-" .. n .. "/approve", headers)
end
