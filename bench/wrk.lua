-- wrk script of the cityref benchmark: optional random ids, and a done() hook printing one JSON line.
-- Environment: BENCH_IDS = a file of ids, one a line (absent: wrk's fixed request from the URL);
-- BENCH_PATH = the path with %s where the id goes (e.g. /city/v1/get?id=%s&language=en).
local ids_file = os.getenv("BENCH_IDS")
local path = os.getenv("BENCH_PATH")
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

if ids_file and ids_file ~= "" then
  local ids = {}
  init = function(args)
    for line in io.lines(ids_file) do ids[#ids + 1] = line end
    math.randomseed(1000 + (tid or 0))
  end
  request = function()
    return wrk.format("GET", string.format(path, ids[math.random(#ids)]))
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  local function p(q) return latency:percentile(q) end
  io.write(string.format(
    '{"duration_us":%d,"requests":%d,"bytes":%d,' ..
    '"latency_us":{"min":%d,"max":%d,"mean":%.2f,"stdev":%.2f,"p50":%d,"p90":%d,"p99":%d,"p99_9":%d},' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.duration, summary.requests, summary.bytes,
    latency.min, latency.max, latency.mean, latency.stdev, p(50), p(90), p(99), p(99.9),
    e.connect, e.read, e.write, e.status, e.timeout))
end
