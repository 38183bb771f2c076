#!/usr/bin/env bash
# `shamba serve` driven by Redis's own tools: every command through redis-cli (expiry,
# hashes and sets, MULTI/EXEC/WATCH among them, a second connection racing WATCH, Lua
# scripts and SCRIPT KILL), pipelined
# input through `redis-cli --pipe`, bad frames through a raw socket, then
# `redis-benchmark -t set,get,mset -n 100000 -P 16` to completion and its keys read back,
# SELECT's databases kept apart (keys, DBSIZE, FLUSHDB per database), sorted sets and
# lists (a blocked BLPOP served by a push among them), SORT, SWAPDB, then SIGTERM and a
# restart that still has the data (in every database, swapped ones too), then FLUSHALL; then a server started from a
# config file with a password: AUTH, HELLO's AUTH, CLIENT LIST/KILL, pub/sub, and TLS
# through `redis-cli --tls` (with a certificate made by openssl, skipped without it).
# Installs Debian's redis-tools when
# redis-cli is missing. Run by CI after the cargo steps:
#   scripts/redis-tests.sh [SHAMBA_BIN]     (default: target/debug/shamba, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/shamba}
[ -x "$bin" ] || cargo build -q -p shamba-cli
if ! command -v redis-cli >/dev/null || ! command -v redis-benchmark >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-tools >/dev/null
fi

tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
passed=0; failed=0

# A free port for the metrics endpoint.
mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

start() {
  "$bin" serve --db "$tmp/db" --bind 127.0.0.1:0 --sync everysec --enable-debug-command \
    --metrics-bind "127.0.0.1:$mport" "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 100); do grep -q "listening on" "$tmp/out" 2>/dev/null && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/out")
  [ -n "$port" ] || { cat "$tmp/err"; echo "server did not start"; exit 1; }
}

# expect "WANTED OUTPUT" redis-cli-args...: redis-cli's formatted output, lines joined by |.
expect() {
  local want=$1; shift
  local got
  got=$(redis-cli -p "$port" --no-raw "$@" 2>&1 | paste -sd'|' -)
  if [ "$got" == "$want" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: redis-cli $*"; echo "  want: $want"; echo "  got:  $got"; fi
}

# check NAME COMMAND...: a shell condition.
check() {
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $name"; fi
}

start
expect 'PONG' PING
expect '"hi"' ECHO hi
expect '(nil)' GET k
expect 'OK' SET k v1
expect '"v1"' GET k
expect '(nil)' SET k v2 NX
expect '"v1"' SET k v2 XX GET
expect '"v2"' GETSET k v4
expect 'OK' MSET a 1 b 2 c 3
expect '1) "1"|2) (nil)|3) "3"' MGET a nope c
expect '(integer) 2' INCR a
expect '(integer) 12' INCRBY a 10
expect '(integer) 11' DECR a
expect '(integer) 1' DECRBY a 10
expect '(error) ERR value is not an integer or out of range' INCR k
expect '(integer) 5' APPEND s hello
expect '(integer) 11' APPEND s " world"
expect '(integer) 11' STRLEN s
expect '(integer) 3' EXISTS a b b
expect '(integer) 2' DEL b c nope
expect '1) "a"|2) "k"|3) "s"' KEYS '*'
expect '1) "a"' KEYS '[a-b]'
expect '(integer) 3' DBSIZE
expect 'OK' SELECT 0
expect '(error) ERR DB index is out of range' SELECT 16
expect '(error) ERR DB index is out of range' SELECT -1
expect '(error) ERR value is not an integer or out of range' SELECT one
expect '1) "databases"|2) "16"' CONFIG GET databases
expect 'OK' CLIENT SETNAME tester
check "COMMAND COUNT is a number" bash -c "[[ \$(redis-cli -p $port COMMAND COUNT) =~ ^[0-9]+$ ]]"
check "COMMAND DOCS describes GET" bash -c "redis-cli -p $port COMMAND DOCS get | grep -q \"Get a key's value\""
check "INFO shows the engine's statistics" bash -c "redis-cli -p $port INFO | grep -q '^filter_false_positives:'"
check "INFO shows block reads" bash -c "redis-cli -p $port INFO shamba_io | grep -q '^block_reads_data:'"
check "HELLO 3 switches to RESP3" bash -c "redis-cli -3 -p $port HELLO 3 | grep -q 'proto'"
check "RESP3 null" bash -c "[ \"\$(redis-cli -3 -p $port --no-raw GET nope)\" == '(nil)' ]"
# redis-cli --scan parses cursors as integers: they must be numbers.
for i in $(seq 1 120); do echo "SET scan:$i x"; done | redis-cli -p "$port" >/dev/null
check "redis-cli --scan walks every key once" bash -c "[ \"\$(redis-cli -p $port --scan --pattern 'scan:*' | sort | uniq | wc -l)\" == 120 ]"
expect 'OK' QUIT

# SELECT: one keyspace per database. redis-cli -n N selects database N before its command.
expect 'OK' -n 1 SET k in-db1
expect 'OK' -n 1 MSET only1 x other1 y
expect '"in-db1"' -n 1 GET k
expect '"v4"' -n 0 GET k
expect '(nil)' GET only1
expect '(integer) 0' EXISTS only1 other1
expect '(integer) 2' -n 1 EXISTS only1 other1
expect '1) "k"|2) "only1"|3) "other1"' -n 1 KEYS '*'
expect '(integer) 3' -n 1 DBSIZE
expect '(integer) 0' -n 2 DBSIZE
expect '(integer) 7' -n 2 INCRBY k 7
expect '"in-db1"' -n 1 GET k
check "SCAN walks only the selected database" bash -c "[ \"\$(redis-cli -p $port -n 1 --scan | sort | paste -sd' ' -)\" == 'k only1 other1' ]"
check "INFO names the selected database" bash -c "redis-cli -p $port -n 1 INFO server | grep -q '^db_keyspace:db1'"
# SELECT within one connection: its later commands use the database it chose.
check "SELECT switches a connection's database" bash -c "[ \"\$(printf 'SELECT 1\nGET k\nSELECT 0\nGET k\n' | redis-cli -p $port | paste -sd' ' -)\" == 'OK in-db1 OK v4' ]"
n0=$(redis-cli -p "$port" DBSIZE)
expect 'OK' -n 1 FLUSHDB
expect '(integer) 0' -n 1 DBSIZE
expect '(nil)' -n 1 GET k
check "FLUSHDB of db 1 leaves db 0" test "$(redis-cli -p "$port" DBSIZE)" == "$n0"
expect '"7"' -n 2 GET k
expect '"v4"' GET k
expect 'OK' -n 1 SET after-flush yes
expect '"yes"' -n 1 GET after-flush

# Expiry: SET's options, SETEX, PSETEX, GETEX, EXPIRE and friends, TTL and friends, PERSIST.
expect 'OK' SET e v EX 100
expect '(integer) 100' TTL e
check "PTTL in milliseconds" bash -c "n=\$(redis-cli -p $port PTTL e); [ \$n -gt 99000 ] && [ \$n -le 100000 ]"
expect 'OK' SET e v2 KEEPTTL
expect '(integer) 100' TTL e
expect 'OK' SET e v3
expect '(integer) -1' TTL e
expect '(integer) -2' TTL nope
expect '(error) ERR invalid expire time in '"'"'set'"'"' command' SET e v EX 0
expect '(error) ERR syntax error' SET e v EX 10 PX 10
expect 'OK' SET e v EXAT 4102444800
expect '(integer) 4102444800' EXPIRETIME e
expect '(integer) 4102444800000' PEXPIRETIME e
expect '(integer) 1' PERSIST e
expect '(integer) 0' PERSIST e
expect '(integer) 1' EXPIRE e 50 NX
expect '(integer) 0' EXPIRE e 100 NX
expect '(integer) 1' EXPIRE e 100 GT
expect '(integer) 0' EXPIRE e 10 GT
expect '(integer) 1' PEXPIRE e 20000 LT
expect '(integer) 20' TTL e
expect '(error) ERR NX and XX, GT or LT options at the same time are not compatible' EXPIRE e 10 NX XX
expect 'OK' SETEX se 30 v
expect '(integer) 30' TTL se
expect '"v"' GETEX se PERSIST
expect '(integer) -1' TTL se
expect '"v"' GETEX se EX 40
expect '(integer) 40' TTL se
expect 'OK' PSETEX short 100 v
expect 'OK' SET short2 v PX 100
expect '(integer) 2' EXISTS short short2
sleep 0.3
expect '(nil)' GET short
expect '(integer) 0' EXISTS short short2
expect '(empty array)' KEYS 'short*'
expect '(integer) 1' EXPIRE se -1
expect '(nil)' GET se

# The rest of the string family, bits, whole-key moves.
expect '(integer) 1' SETNX nx 1
expect '(integer) 0' SETNX nx 2
expect '(integer) 0' MSETNX nx 3 nx2 4
expect '"1"' GETDEL nx
expect '(integer) 11' SETRANGE r 6 World
expect '"\x00\x00\x00\x00\x00\x00World"' GET r
expect '"Wor"' GETRANGE r 6 8
expect '"10.6"' INCRBYFLOAT fl 10.6
expect 'OK' MSET lcs1 ohmytext lcs2 mynewtext
expect '"mytext"' LCS lcs1 lcs2
expect '(integer) 0' SETBIT bits 7 1
expect '(integer) 1' GETBIT bits 7
expect '(integer) 1' BITCOUNT bits
expect '(integer) 7' BITPOS bits 1
expect '(integer) 1' BITOP NOT nbits bits
expect 'OK' SET mv 1 EX 100
expect 'OK' RENAME mv mv2
expect '(integer) 100' TTL mv2
expect '(integer) 1' COPY mv2 mv3 DB 1
expect '(integer) 1' MOVE mv2 2
expect '"1"' -n 2 GET mv2
expect '"1"' -n 1 GET mv3
expect '"int"' -n 1 OBJECT ENCODING mv3
# Introspection: INFO sections, CONFIG, SLOWLOG, COMMAND, FUNCTION.
check "INFO has Redis's sections" bash -c "redis-cli -p $port INFO | grep -q '^# Keyspace' && redis-cli -p $port INFO memory | grep -q '^used_memory_rss:'"
check "INFO commandstats counts calls" bash -c "redis-cli -p $port INFO commandstats | grep -q '^cmdstat_setnx:calls=2,'"
expect '1) "maxmemory"|2) "0"' CONFIG GET maxmemory
expect 'OK' CONFIG SET slowlog-log-slower-than 0
expect 'OK' SLOWLOG RESET
expect 'PONG' PING
check "SLOWLOG logs every command at threshold 0" bash -c "[ \$(redis-cli -p $port SLOWLOG LEN) -ge 1 ]"
expect 'OK' CONFIG SET slowlog-log-slower-than 10000
check "CONFIG SET of a fixed setting is refused" bash -c "redis-cli -p $port CONFIG SET databases 2 | grep -q immutable"
expect '1) "a"|2) "c"' COMMAND GETKEYS MSET a b c d
expect '(empty array)' FUNCTION LIST
expect 'OK' FUNCTION FLUSH
expect 'OK' DEBUG SLEEP 0
# Inline commands with quotes and escapes; unbalanced quotes are a protocol error.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'SET "in line" "\\x41\\x42"\r\nGET "in line"\r\nGET "open\r\n' >&3
inline=$(timeout 10 cat <&3 | tr -d '\r' | paste -sd'|' - || true)
exec 3>&-
check "inline quotes and escapes" test "$inline" == "+OK|\$2|AB|-ERR Protocol error: unbalanced quotes in request"
# Prometheus metrics on --metrics-bind.
exec 3<>"/dev/tcp/127.0.0.1/$mport"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n' >&3
timeout 10 cat <&3 >"$tmp/metrics" || true
exec 3>&-
check "metrics: 200 and requests by command" bash -c "head -1 $tmp/metrics | grep -q '200 OK' && grep -q '^shamba_requests_total{command=\"setnx\"} 2' $tmp/metrics"
check "metrics: the engine's block reads" grep -q '^shamba_engine_block_reads_total{kind="data"}' "$tmp/metrics"

# MULTI/EXEC/DISCARD/WATCH on one connection (redis-cli reading its commands from stdin).
cli() { redis-cli -p "$port" "$@" | paste -sd' ' -; }
check "MULTI queues and EXEC runs" test "$(printf 'MULTI\nSET m 1\nINCR m\nGET m\nEXEC\n' | cli)" == "OK QUEUED QUEUED QUEUED OK 2 2"
check "an error while queuing aborts EXEC" bash -c "printf 'MULTI\nSET m 9\nNOSUCH\nEXEC\nGET m\n' | redis-cli -p $port | grep -q EXECABORT && [ \$(redis-cli -p $port GET m) == 2 ]"
check "DISCARD drops the queue" test "$(printf 'MULTI\nSET m 9\nDISCARD\nGET m\n' | cli)" == "OK QUEUED OK 2"
check "WATCH of an unchanged key: EXEC runs" test "$(printf 'WATCH m\nMULTI\nINCR m\nEXEC\n' | cli)" == "OK OK QUEUED 3"
check "WATCH inside MULTI is refused" bash -c "printf 'MULTI\nWATCH m\nDISCARD\n' | redis-cli -p $port | grep -q 'WATCH inside MULTI is not allowed'"
# Another connection writes the watched key between WATCH and EXEC: EXEC answers nil.
(printf 'WATCH m\n'; sleep 0.5; printf 'MULTI\nSET m mine\nEXEC\n') | redis-cli -p "$port" --no-raw >"$tmp/watch.out" &
watcher=$!
sleep 0.25
redis-cli -p "$port" SET m theirs >/dev/null
wait "$watcher"
check "WATCH: another connection's write makes EXEC nil" bash -c "tail -1 $tmp/watch.out | grep -q '(nil)'"
expect '"theirs"' GET m

# Lua scripts: EVAL with KEYS and ARGV, redis-cli --eval of a file, the script cache
# (EVALSHA, SCRIPT LOAD/EXISTS/FLUSH), the sandbox, a read-only script, cjson, cmsgpack
# and bit, a shebang line's flags, and a script that
# loops answered BUSY to another client until SCRIPT KILL stops it.
expect '1) "k1"|2) "a1"' EVAL 'return {KEYS[1], ARGV[1]}' 1 k1 a1
printf "redis.call('set', KEYS[1], ARGV[1])\nreturn redis.call('incrby', KEYS[1], ARGV[2])\n" >"$tmp/incr.lua"
check "redis-cli --eval of a file" test "$(redis-cli -p "$port" --eval "$tmp/incr.lua" ek , 40 2)" == "42"
expect '"OK"' EVAL "return redis.call('set', KEYS[1], 'v')['ok']" 1 ek
expect '1) (integer) 1|2) (integer) 2' EVAL 'return {1.9, 2, nil, 3}' 0
expect '(error) ERR value is not an integer or out of range' EVAL "return redis.call('incr', KEYS[1])" 1 ek
sha=$(redis-cli -p "$port" SCRIPT LOAD "return redis.call('get', KEYS[1])")
expect '"v"' EVALSHA "$sha" 1 ek
expect '1) (integer) 1|2) (integer) 0' SCRIPT EXISTS "$sha" 0000000000000000000000000000000000000000
expect 'OK' SCRIPT FLUSH
expect '(error) NOSCRIPT No matching script. Please use EVAL.' EVALSHA "$sha" 1 ek
check "scripts cannot create globals" bash -c "redis-cli -p $port EVAL 'x = 1' 0 2>&1 | grep -q 'Attempt to modify a readonly table'"
check "scripts have no os library" bash -c "redis-cli -p $port EVAL 'return os.time()' 0 2>&1 | grep -q \"nonexistent global variable 'os'\""
expect '(error) ERR Write commands are not allowed from read-only scripts.' EVAL_RO "return redis.call('set', KEYS[1], 'w')" 1 ek
expect '"[1,\"a\\/b\"]"' EVAL "return cjson.encode(cjson.decode(ARGV[1]))" 0 '[1,"a/b"]'
expect '(integer) 10' EVAL "return select(2, cmsgpack.unpack(cmsgpack.pack(ARGV[1], 7))) + bit.bor(1, 2)" 0 x
expect '(error) ERR Write commands are not allowed from read-only scripts.' EVAL "#!lua flags=no-writes
return redis.call('set', KEYS[1], 'w')" 1 ek
expect 'OK' CONFIG SET lua-time-limit 100
redis-cli -p "$port" EVAL 'while true do end' 0 >"$tmp/killed.out" 2>&1 &
looper=$!
sleep 1
check "a busy script: BUSY to others" bash -c "redis-cli -p $port PING 2>&1 | grep -q '^BUSY'"
expect 'OK' SCRIPT KILL
wait "$looper" || true
check "SCRIPT KILL: the script ends killed" grep -q 'killed by user' "$tmp/killed.out"
expect 'PONG' PING
expect 'OK' CONFIG SET lua-time-limit 5000

# Hashes and sets (a metadata entry per key, an entry per field): their commands, TYPE,
# WRONGTYPE both ways, SCAN's TYPE, expiry, SET and DEL over a collection, EXEC.
expect '(integer) 2' HSET user:1 name ada lang rust
expect '"ada"' HGET user:1 name
expect '1) "lang"|2) "rust"|3) "name"|4) "ada"' HGETALL user:1
expect '(integer) 11' HINCRBY user:1 visits 11
expect '(integer) 3' HLEN user:1
expect 'hash' TYPE user:1
expect '(error) WRONGTYPE Operation against a key holding the wrong kind of value' GET user:1
expect '(integer) 3' SADD tags a b c
expect '(integer) 3' SADD tags2 b a z
expect '1) "a"|2) "b"' SINTER tags tags2
expect '(integer) 1' SISMEMBER tags c
expect '(error) WRONGTYPE Operation against a key holding the wrong kind of value' HGET tags a
expect '(error) WRONGTYPE Operation against a key holding the wrong kind of value' SADD k x
check "SCAN TYPE hash finds the hashes only" test "$(redis-cli -p "$port" SCAN 0 TYPE hash COUNT 100000 | tail -n +2 | paste -sd' ' -)" == "user:1"
expect '(integer) 1' EXPIRE tags 100
expect '(integer) 100' TTL tags
expect 'OK' SET tags now-a-string
expect 'string' TYPE tags
expect '(integer) -1' TTL tags
expect '(integer) 2' DEL user:1 tags2
expect '(integer) 0' EXISTS user:1 tags2
expect '(nil)' HGET user:1 name
check "EXEC runs hash and set writes" test "$(printf 'MULTI\nHSET mh f 1\nSADD ms x\nHINCRBY mh f 2\nEXEC\n' | cli)" == "OK QUEUED QUEUED QUEUED 1 1 3"
expect 'OK' -n 3 HMSET kept f v

# Pipelined input: 20000 SETs in RESP through --pipe, its summary checked.
python3 - "$tmp/pipe.txt" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(20000):
        k, v = b"pipe:%d" % i, b"value-%d" % i
        f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
EOF
redis-cli -p "$port" --pipe <"$tmp/pipe.txt" >"$tmp/pipe.out" 2>&1 || true
check "--pipe: every reply and no error" grep -q "errors: 0, replies: 20000" "$tmp/pipe.out"
expect '"value-19999"' GET pipe:19999

# Bad frames over a raw socket: an error, then the connection closes; others carry on.
for frame in '*1\r\n$99999999999\r\n' '*3000000\r\n' '*1\r\n:1\r\n'; do
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf "$frame" >&3
  reply=$(timeout 10 cat <&3 || true)
  exec 3>&-
  check "bad frame $frame: protocol error and close" bash -c "[[ '$reply' == -ERR\ Protocol\ error* ]]"
done
expect '"v4"' GET k

# redis-benchmark to completion (it exits at the first error reply), then its keys read back.
expect 'OK' FLUSHDB
redis-benchmark -p "$port" -t set,get,mset -n 100000 -P 16 -r 1000 -q >"$tmp/bench.out" 2>&1 || true
cat "$tmp/bench.out" | tr '\r' '\n' | grep "requests per second" || true
check "redis-benchmark: three tests completed" bash -c "[ \"\$(tr '\r' '\n' <$tmp/bench.out | grep -c 'requests per second')\" == 3 ]"
check "redis-benchmark: no error reply" bash -c "! grep -qi error $tmp/bench.out"
keys=$(redis-cli -p "$port" --scan --pattern 'key:*' | head -50 || true)
check "redis-benchmark wrote keys" test -n "$keys"
bad=0
# Its values are 3 bytes (-d's default) of its own filler.
for k in $keys; do [ "$(redis-cli -p "$port" STRLEN "$k")" == 3 ] || bad=$((bad + 1)); done
check "redis-benchmark's values read back" test "$bad" -eq 0
check "DBSIZE counts the benchmark's keys" bash -c "n=\$(redis-cli -p $port DBSIZE); [ \$n -gt 0 ] && [ \$n -le 1000 ]"
expect 'OK' SET survivor yes

# Sorted sets and lists (database 5): scores in order, ranges by score and by member,
# WRONGTYPE, pops, a blocked BLPOP served by another client's push.
expect '(integer) 4' -n 5 ZADD z 1 a 2 b 2.5 c -inf d
expect '1) "d"|2) "-inf"|3) "a"|4) "1"' -n 5 ZRANGE z 0 1 WITHSCORES
expect '1) "c"|2) "b"' -n 5 ZRANGE z +inf '(1' BYSCORE REV
expect '"3.5"' -n 5 ZINCRBY z 1 c
expect '(integer) 2' -n 5 ZRANK z b
expect '(integer) 3' -n 5 ZCOUNT z -inf 2
expect '(integer) 4' -n 5 ZUNIONSTORE u 2 z z WEIGHTS 1 2
expect '"6"' -n 5 ZSCORE u b
expect 'zset' -n 5 TYPE z
expect '(integer) 3' -n 5 RPUSH l x y z
expect '(integer) 4' -n 5 LPUSH l w
expect '1) "w"|2) "x"|3) "y"|4) "z"' -n 5 LRANGE l 0 -1
expect '"y"' -n 5 LINDEX l -2
expect '(integer) 5' -n 5 LINSERT l BEFORE y x2
expect '1) "z"|2) "y"' -n 5 RPOP l 2
expect 'list' -n 5 TYPE l
expect '(error) WRONGTYPE Operation against a key holding the wrong kind of value' -n 5 LPUSH z v
# SORT: numbers, BY another key and a hash's field, GET, STORE as a list.
expect '(integer) 4' -n 5 RPUSH ids 3 1 10 2
expect '1) "1"|2) "2"|3) "3"|4) "10"' -n 5 SORT ids
expect '1) "1"|2) "10"|3) "2"|4) "3"' -n 5 SORT ids ALPHA
expect 'OK' -n 5 MSET w_1 4 w_2 3 w_3 2 w_10 1
expect '1) "10"|2) "3"' -n 5 SORT ids BY 'w_*' LIMIT 0 2
expect '(integer) 2' -n 5 HSET o_3 name three weight 9
expect '1) "3"|2) "three"|3) "2"|4) (nil)' -n 5 SORT ids BY 'o_*->weight' DESC GET '#' GET 'o_*->name' LIMIT 0 2
expect '(integer) 4' -n 5 SORT ids DESC STORE sorted
expect '1) "10"|2) "3"|3) "2"|4) "1"' -n 5 LRANGE sorted 0 -1
expect "(error) ERR One or more scores can't be converted into double" -n 5 SORT z
(sleep 0.5; redis-cli -p "$port" -n 5 RPUSH waited v >/dev/null) &
pusher=$!
expect '1) "waited"|2) "v"' -n 5 BLPOP waited 10
wait "$pusher"
expect '(nil)' -n 5 BLPOP nothing 0.1

expect '1) "d"|2) "a"|3) "b"|4) "c"' -n 5 ZRANGE z 0 -1
# SWAPDB: databases 7 and 8 exchange their keys (checked again after the restart).
expect 'OK' -n 7 SET swapped seven
expect 'OK' SWAPDB 7 8
expect '"seven"' -n 8 GET swapped
expect '(nil)' -n 7 GET swapped
# SIGTERM: a clean stop that flushes; a restart still has the data.
kill -TERM "$pid"
status=0; wait "$pid" || status=$?
pid=""
check "SIGTERM: exit 0" test "$status" -eq 0
check "SIGTERM: flushed and closed" grep -q "flushed and closed" "$tmp/err"
start
expect '"yes"' GET survivor
check "benchmark keys survive" bash -c "[ \"\$(redis-cli -p $port STRLEN key:000000000001)\" == 3 ]"
expect '"yes"' -n 1 GET after-flush
expect '"7"' -n 2 GET k
expect '"v"' -n 3 HGET kept f
expect '1) "d"|2) "a"|3) "b"|4) "c"' -n 5 ZRANGE z 0 -1
expect '"seven"' -n 8 GET swapped
expect '1) "w"|2) "x"|3) "x2"' -n 5 LRANGE l 0 -1
# FLUSHALL: every database at once (one batch of range deletes).
expect 'OK' FLUSHALL
for n in 0 1 2 3; do expect '(integer) 0' -n "$n" DBSIZE; done
expect '(nil)' -n 1 GET after-flush
kill -TERM "$pid"; wait "$pid" || true; pid=""

# A config file's unknown setting: the server does not start, and says which line.
printf 'port 0\nsave 900 1\n' >"$tmp/bad.conf"
"$bin" serve --db "$tmp/db" --config "$tmp/bad.conf" >/dev/null 2>"$tmp/bad.err" && status=0 || status=$?
check "a bad config file: exit non-zero" test "$status" -ne 0
check "a bad config file: the line named" grep -q "bad.conf, line 2: unknown setting 'save'" "$tmp/bad.err"

# A password from a config file (quoted, with a space), and TLS when openssl can make a
# certificate.
printf '# as redis.conf says it\nrequirepass "pass word"\nmaxclients 100\ntimeout 0\n' >"$tmp/shamba.conf"
tls=()
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
  tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  tls=(--tls-port "$tls_port" --tls-cert-file "$tmp/cert.pem" --tls-key-file "$tmp/key.pem")
else
  echo "redis-tests: no openssl, TLS skipped"
fi
start --config "$tmp/shamba.conf" "${tls[@]}"
pw=(-a "pass word" --no-auth-warning)
expect '(error) NOAUTH Authentication required.' GET k
expect '(error) WRONGPASS invalid username-password pair or user is disabled.' AUTH nope
expect 'PONG' "${pw[@]}" PING
expect 'OK' "${pw[@]}" SET k secret
check "HELLO 3 AUTH default PASSWORD" bash -c "redis-cli -p $port HELLO 3 AUTH default 'pass word' | grep -q proto"
check "AUTH then a command on one connection" test "$(printf 'AUTH "pass word"\nGET k\n' | redis-cli -p "$port" | paste -sd' ' -)" == "OK secret"
# Pub/sub: a subscriber in the background, messages published to its channel and pattern.
redis-cli -p "$port" "${pw[@]}" SUBSCRIBE news >"$tmp/sub.out" 2>&1 &
sub=$!
redis-cli -p "$port" "${pw[@]}" PSUBSCRIBE 'n*' >"$tmp/psub.out" 2>&1 &
psub=$!
for _ in $(seq 50); do [ "$(redis-cli -p "$port" "${pw[@]}" PUBSUB NUMPAT)" == 1 ] && \
  [ "$(redis-cli -p "$port" "${pw[@]}" PUBSUB NUMSUB news | tail -1)" == 1 ] && break; sleep 0.1; done
expect '(integer) 2' "${pw[@]}" PUBLISH news hello
expect '(integer) 0' "${pw[@]}" PUBLISH weather rain
expect '1) "news"' "${pw[@]}" PUBSUB CHANNELS
check "CLIENT LIST shows the subscribers" bash -c "[ \$(redis-cli -p $port -a 'pass word' --no-auth-warning CLIENT LIST TYPE pubsub | wc -l) == 2 ]"
sleep 0.3
check "the subscriber received the message" grep -q hello "$tmp/sub.out"
check "the pattern subscriber received it" bash -c "grep -q pmessage $tmp/psub.out && grep -q hello $tmp/psub.out"
# CLIENT KILL TYPE pubsub closes both subscribers.
expect '(integer) 2' "${pw[@]}" CLIENT KILL TYPE pubsub
wait "$sub" "$psub" 2>/dev/null || true
expect '(integer) 0' "${pw[@]}" PUBLISH news again
if [ ${#tls[@]} -gt 0 ]; then
  tlscli=(redis-cli --tls --cacert "$tmp/cert.pem" -h 127.0.0.1 -p "$tls_port" "${pw[@]}")
  check "TLS: PING" test "$("${tlscli[@]}" PING)" == PONG
  check "TLS: the plain port's data" test "$("${tlscli[@]}" GET k)" == secret
  check "TLS: without the password" bash -c "redis-cli --tls --cacert $tmp/cert.pem -h 127.0.0.1 -p $tls_port GET k | grep -q NOAUTH"
  check "TLS: a client that does not trust the certificate fails" bash -c "! redis-cli --tls -h 127.0.0.1 -p $tls_port ${pw[*]@Q} PING >/dev/null 2>&1"
fi
# SHUTDOWN from redis-cli stops the server as SIGTERM does: no reply, the process exits 0.
redis-cli -p "$port" "${pw[@]}" SHUTDOWN NOSAVE >"$tmp/shutdown.out" 2>&1 || true
check "SHUTDOWN: redis-cli prints no error" bash -c "! grep -qi err $tmp/shutdown.out"
status=1
for _ in $(seq 100); do if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; status=$?; break; fi; sleep 0.1; done
check "SHUTDOWN: the server exited by itself, with status 0" test "$status" == 0
[ "$status" == 0 ] || kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; pid=""

echo "redis-tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
