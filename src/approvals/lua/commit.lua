--[[
  commit.lua — compare-and-set commit of one run transition (DESIGN.md §7).

  Every use case reads a run, decides in TypeScript, and commits here. The commit applies only if
  the run's `rev` is still the one that was read, so two approvers, two replicas, a timer and a
  click racing each other produce exactly one winner; the losers re-read and answer from the new
  state. All keys belong to one run (hash tag `{<runId>}`), so this works on Redis Cluster.

  Input:
    KEYS[1]      the run hash (holds `rev`)
    KEYS[2..n]   other keys of the same run that the operations name by index
    ARGV[1]      expected rev: "0" means the run must not exist yet
    ARGV[2]      operations, JSON: [[op, keyIndex, arg1, arg2, ...], ...]
                   "hset"  keyIndex field value [field value ...]
                   "hdel"  keyIndex field [field ...]
                   "set"   keyIndex value
                   "rpush" keyIndex value [value ...]
    ARGV[3]      channel to PUBLISH ARGV[4] on after the commit ("" for none)
    ARGV[4]      message to publish

  Output:
    {1, newRev}      committed; `rev` incremented
    {0, currentRev}  not committed: the run changed since it was read (currentRev "0" = absent)

  Idempotency: none by itself — callers retry by re-reading and re-deciding, which is what makes
  a retried use case idempotent.
]]

local current = redis.call('HGET', KEYS[1], 'rev')
if not current then current = '0' end
if current ~= ARGV[1] then
  return {0, current}
end

local ops = cjson.decode(ARGV[2])
for _, op in ipairs(ops) do
  local name = op[1]
  local key = KEYS[op[2]]
  local args = {}
  for i = 3, #op do args[#args + 1] = op[i] end
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
if ARGV[3] ~= '' then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
end
return {1, tostring(nextRev)}
