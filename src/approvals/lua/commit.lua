--[[
  commit.lua — compare-and-set commit of one run transition (docs/architecture.md §7).

  Every use case reads a run, decides in TypeScript, and commits here. The commit applies only if
  the run's `rev` is still the one that was read, so two approvers, two replicas, a timer and a
  click racing each other produce exactly one winner; the losers re-read and answer from the new
  state. All keys belong to one run (hash tag `{<runId>}`), so this works on Redis Cluster.

  Input:
    KEYS[1]      the run hash (holds `rev`)
    KEYS[2..n]   other keys of the same run that the operations name by index
    ARGV[1]      expected rev: "0" means the run must not exist yet
    ARGV[2]      channel to PUBLISH ARGV[3] on after the commit ("" for none)
    ARGV[3]      message to publish
    ARGV[4]      deadline (ms since the epoch, "" for none): refuse when Redis's TIME has reached it —
                 a transition decided on a pending run before its expiry lands before it, or not at all
    ARGV[5..]    operations, flat (no JSON: values are often JSON themselves, and decoding a
                 document of documents costs more than reading arguments):
                   op keyIndex argCount arg1 … argN, repeated; op is one of
                   "hset"  field value [field value ...]
                   "hdel"  field [field ...]
                   "set"   value
                   "rpush" value [value ...]

  Output:
    {1, newRev}      committed; `rev` incremented
    {0, currentRev}  not committed: the run changed since it was read (currentRev "0" = absent)
    {0, currentRev, 'deadline'}  not committed: Redis's time reached the deadline (the caller
                 re-reads and decides again, past the expiry)

  Idempotency: none by itself — callers retry by re-reading and re-deciding, which is what makes
  a retried use case idempotent.
]]

local current = redis.call('HGET', KEYS[1], 'rev')
if not current then current = '0' end
if current ~= ARGV[1] then
  return {0, current}
end
if ARGV[4] ~= '' then
  local now = redis.call('TIME')
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) >= tonumber(ARGV[4]) then
    return {0, current, 'deadline'}
  end
end

local i = 5
while i <= #ARGV do
  local name = ARGV[i]
  local key = KEYS[tonumber(ARGV[i + 1])]
  local count = tonumber(ARGV[i + 2])
  local args = {}
  for j = 1, count do args[j] = ARGV[i + 2 + j] end
  i = i + 3 + count
  if name == 'hset' then
    redis.call('HSET', key, unpack(args))
  elseif name == 'hdel' then
    redis.call('HDEL', key, unpack(args))
  elseif name == 'set' then
    redis.call('SET', key, args[1])
  elseif name == 'rpush' then
    redis.call('RPUSH', key, unpack(args))
  else
    return redis.error_reply('commit.lua: unknown operation ' .. tostring(name))
  end
end

local nextRev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
if ARGV[2] ~= '' then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return {1, tostring(nextRev)}
