-- Run once when the server makes its Lua state: builds the environment scripts run in.
-- Scripts never see the real globals table G: they run in `env`, an empty table whose
-- reads fall through to G and whose writes fail, so a script cannot create a global, replace
-- `redis`, or reach G through `_G`, `getfenv`, `setmetatable` or `rawset`. The words of the
-- errors are Redis's.
--
-- Given by the server: `raw_call` (runs a command; answers the converted reply and whether
-- it was an error), `check` (raises once SCRIPT KILL asked the running script to stop),
-- `sha1hex`, `log`, and the libraries Redis gives scripts: `cjson`, `cmsgpack`, `bit`.
local raw_call, check, sha1hex, log, cjson, cmsgpack, bit = ...
local G = _G
local real_setmetatable, real_rawset, real_pcall, real_xpcall = setmetatable, rawset, pcall, xpcall
local real_loadstring, real_setfenv, real_error, real_type = loadstring, setfenv, error, type
local real_tostring = tostring

-- Tables no script may change (weak keys: the set never keeps one alive).
local protected = real_setmetatable({}, { __mode = "k" })

local function readonly_error()
  real_error("Attempt to modify a readonly table", 2)
end

-- A read-only view of `t`: reads see `t`, writes fail.
local function readonly(t)
  local mt = { __index = t, __newindex = readonly_error }
  local view = real_setmetatable({}, mt)
  local mt_view = real_setmetatable({}, { __index = mt, __newindex = readonly_error })
  mt.__metatable = mt_view
  protected[view] = true
  protected[mt_view] = true
  return view
end

local env = {}
local env_mt = {
  __index = function(_, name)
    if name == "_G" then
      return env
    end
    local v = G[name]
    if v == nil then
      real_error("Script attempted to access nonexistent global variable '" .. real_tostring(name) .. "'", 2)
    end
    return v
  end,
  __newindex = readonly_error,
}
env_mt.__metatable = readonly(env_mt)
real_setmetatable(env, env_mt)
protected[env] = true

-- What Redis removes, and what would hand a script the real globals or the file system.
for _, name in ipairs({ "loadfile", "dofile", "print", "getfenv", "setfenv", "module", "require", "newproxy", "gcinfo", "collectgarbage" }) do
  G[name] = nil
end

G.setmetatable = function(t, mt)
  if protected[t] then
    readonly_error()
  end
  return real_setmetatable(t, mt)
end

G.rawset = function(t, k, v)
  if protected[t] then
    readonly_error()
  end
  return real_rawset(t, k, v)
end

-- A killed script ends even when it calls pcall in a loop: the check runs outside the
-- protected call.
G.pcall = function(...)
  check()
  return real_pcall(...)
end

G.xpcall = function(...)
  check()
  return real_xpcall(...)
end

-- Source text only (Lua 5.1 would load bytecode, which can break the VM), in the script's
-- environment.
G.loadstring = function(s, name)
  if real_type(s) == "string" and s:sub(1, 1) == "\27" then
    return nil, "binary chunks are not allowed"
  end
  local f, err = real_loadstring(s, name)
  if f then
    real_setfenv(f, env)
  end
  return f, err
end
G.load = nil

local redis = {}
redis.call = function(...)
  local reply, failed = raw_call(...)
  if failed then
    real_error(reply, 0)
  end
  return reply
end
redis.pcall = function(...)
  local reply = raw_call(...)
  return reply
end
redis.error_reply = function(e)
  if real_type(e) ~= "string" then
    real_error("wrong number or type of arguments", 2)
  end
  return { err = e }
end
redis.status_reply = function(s)
  if real_type(s) ~= "string" then
    real_error("wrong number or type of arguments", 2)
  end
  return { ok = s }
end
redis.sha1hex = sha1hex
redis.log = log
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.setresp = function(n)
  if n ~= 2 then
    real_error("RESP3 replies are not supported in scripts on this server", 2)
  end
end

G.redis = readonly(redis)
G.cjson, G.cmsgpack, G.bit = cjson, cmsgpack, bit
for _, name in ipairs({ "string", "table", "math", "cjson", "cmsgpack", "bit" }) do
  G[name] = readonly(G[name])
end

-- How the server runs a script: its errors come back as values.
local function run(f)
  return real_pcall(f)
end

return env, run
