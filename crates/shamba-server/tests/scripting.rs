//! EVAL and its family through the command layer: the conversions both ways, KEYS and
//! ARGV, the sandbox's refusals, EVALSHA and the script cache, read-only scripts, a
//! script's writes seen all at once by another client, and a busy script answered BUSY to
//! others until SCRIPT KILL stops it.

mod common;

use common::{bulk, server, words};
use shamba_server::{Reply, Server, Session};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// EVAL `script` with `rest` (numkeys, keys, arguments) as its words.
fn eval(srv: &Server, s: &mut Session, script: &str, rest: &[&str]) -> Reply {
    let mut args = vec![b"EVAL".to_vec(), script.as_bytes().to_vec()];
    args.extend(rest.iter().map(|w| w.as_bytes().to_vec()));
    srv.execute(s, &args)
}

fn error_of(r: &Reply) -> &str {
    match r {
        Reply::Error(e) => e,
        other => panic!("not an error: {other:?}"),
    }
}

#[test]
fn lua_values_become_replies_as_redis_converts_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(eval(&srv, s, "return 'hello'", &["0"]), bulk("hello"));
    assert_eq!(eval(&srv, s, "return 100.5", &["0"]), Reply::Int(100), "numbers truncate");
    assert_eq!(eval(&srv, s, "return -3.9", &["0"]), Reply::Int(-3));
    assert_eq!(eval(&srv, s, "return true", &["0"]), Reply::Int(1));
    assert_eq!(eval(&srv, s, "return false", &["0"]), Reply::Null);
    assert_eq!(eval(&srv, s, "return nil", &["0"]), Reply::Null);
    assert_eq!(eval(&srv, s, "return {ok='fine'}", &["0"]), Reply::Status("fine".into()));
    assert_eq!(
        eval(&srv, s, "return {err='ERR this is an error'}", &["0"]),
        Reply::Error("ERR this is an error".into())
    );
    assert_eq!(
        eval(&srv, s, "return redis.error_reply('MY_CODE custom')", &["0"]),
        Reply::Error("MY_CODE custom".into())
    );
    assert_eq!(eval(&srv, s, "return redis.error_reply('')", &["0"]), Reply::Error("ERR".into()));
    assert_eq!(eval(&srv, s, "return redis.status_reply('MY_OK')", &["0"]), Reply::Status("MY_OK".into()));
    assert_eq!(
        eval(&srv, s, "return {1,2,3,'ciao',{1,2}}", &["0"]),
        Reply::Array(vec![
            Reply::Int(1),
            Reply::Int(2),
            Reply::Int(3),
            bulk("ciao"),
            Reply::Array(vec![Reply::Int(1), Reply::Int(2)])
        ])
    );
    assert_eq!(
        eval(&srv, s, "return {1,2,nil,4}", &["0"]),
        Reply::Array(vec![Reply::Int(1), Reply::Int(2)]),
        "an array stops at its first nil"
    );
    assert_eq!(eval(&srv, s, "return _G", &["0"]), Reply::Array(vec![]));
    assert_eq!(
        eval(&srv, s, "return {KEYS[1],KEYS[2],ARGV[1],ARGV[2]}", &["2", "a", "b", "c", "d"]),
        Reply::Array(vec![bulk("a"), bulk("b"), bulk("c"), bulk("d")])
    );
    assert_eq!(
        eval(&srv, s, "return redis.sha1hex('Pizza & Mandolino')", &["0"]),
        bulk("74822d82031af7493c20eefa13bd07ec4fada82f")
    );
}

#[test]
fn replies_become_lua_values_as_redis_converts_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    // Integer -> number, bulk -> string, nil -> false, status -> {ok}, error -> {err}.
    let kinds = "local t = {} \
        t[1] = type(redis.call('incr', 'n')) \
        t[2] = type(redis.call('get', 'n')) \
        t[3] = tostring(redis.call('get', 'missing')) \
        t[4] = redis.call('set', 'k', 'v').ok \
        t[5] = redis.pcall('incr', 'k').err \
        t[6] = #redis.call('mget', 'n', 'missing', 'k') \
        return t";
    assert_eq!(
        eval(&srv, s, kinds, &["0"]),
        Reply::Array(vec![
            bulk("number"),
            bulk("string"),
            bulk("false"),
            bulk("OK"),
            bulk("ERR value is not an integer or out of range"),
            Reply::Int(3),
        ])
    );
    // A status passes through as a status, and a raised error ends the script with it.
    assert_eq!(eval(&srv, s, "return redis.call('set', 'k', 'w')", &["0"]), Reply::Status("OK".into()));
    assert_eq!(
        eval(&srv, s, "redis.call('incr', 'k') return 'not reached'", &["0"]),
        Reply::Error("ERR value is not an integer or out of range".into())
    );
    // Numbers are passed to commands as Lua prints them.
    assert_eq!(eval(&srv, s, "redis.call('set', 'f', 10) return redis.call('incrby', 'f', 5)", &["0"]), Reply::Int(15));
}

#[test]
fn the_sandbox_refuses_globals_files_and_commands_scripts_may_not_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let refused = [
        ("a = 10", "Attempt to modify a readonly table"),
        ("return a", "Script attempted to access nonexistent global variable 'a'"),
        ("_G = {}", "Attempt to modify a readonly table"),
        ("redis = function() return 1 end", "Attempt to modify a readonly table"),
        ("redis.call = function() return 1 end", "Attempt to modify a readonly table"),
        ("setmetatable(_G, {})", "Attempt to modify a readonly table"),
        ("local g = getmetatable(_G) g.__index = {}", "Attempt to modify a readonly table"),
        ("rawset(_G, 'x', 1)", "Attempt to modify a readonly table"),
        ("string.len = nil", "Attempt to modify a readonly table"),
        ("loadfile('/etc/passwd')", "nonexistent global variable 'loadfile'"),
        ("dofile('/etc/passwd')", "nonexistent global variable 'dofile'"),
        ("return os.time()", "nonexistent global variable 'os'"),
        ("return io.open('/etc/passwd')", "nonexistent global variable 'io'"),
        ("print('x')", "nonexistent global variable 'print'"),
        ("return loadstring(string.dump(function() return 1 end))()", "attempt to call a nil value"),
        ("return loadstring('b = 1')()", "Attempt to modify a readonly table"),
        ("redis.call('set', 'k')", "ERR Wrong number of args calling Redis command from script"),
        ("redis.call('nosuch')", "ERR Unknown Redis command called from script"),
        ("redis.call('blpop', 'l', 0)", "ERR This Redis command is not allowed from script"),
        ("redis.call('multi')", "ERR This Redis command is not allowed from script"),
        ("redis.call('eval', 'return 1', 0)", "ERR This Redis command is not allowed from script"),
        ("redis.call('set', 'k', {})", "ERR Lua redis lib command arguments must be strings or integers"),
        ("return 1 +", "ERR Error compiling script"),
    ];
    for (script, words) in refused {
        let reply = eval(&srv, s, script, &["0"]);
        assert!(error_of(&reply).contains(words), "{script}: {reply:?}");
    }
    // Locals, pcall and the libraries still work.
    assert_eq!(
        eval(
            &srv,
            s,
            "local ok, e = pcall(function() error('x') end) return {tostring(ok), string.upper('a'), math.floor(2.5)}",
            &["0"]
        ),
        Reply::Array(vec![bulk("false"), bulk("A"), Reply::Int(2)])
    );
    assert_eq!(srv.execute(s, &words("EXISTS k b x")), Reply::Int(0), "no refused script wrote");
}

#[test]
fn evalsha_runs_what_eval_or_script_load_cached_until_script_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let sha = "fd758d1589d044dd850a6f05d52f2eefd27f033f"; // SHA1 of the script below
    assert_eq!(
        srv.execute(s, &words(&format!("EVALSHA {sha} 1 mykey"))),
        Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into())
    );
    assert_eq!(srv.execute(s, &words("SET mykey myval")), Reply::OK);
    assert_eq!(eval(&srv, s, "return redis.call('get',KEYS[1])", &["1", "mykey"]), bulk("myval"));
    assert_eq!(srv.execute(s, &words(&format!("EVALSHA {sha} 1 mykey"))), bulk("myval"));
    assert_eq!(srv.execute(s, &words(&format!("EVALSHA {} 1 mykey", sha.to_uppercase()))), bulk("myval"));
    assert_eq!(
        srv.execute(s, &words(&format!("SCRIPT EXISTS {sha} ffd632c7d33e571e9f24556ebed26c3479a87130"))),
        Reply::Array(vec![Reply::Int(1), Reply::Int(0)])
    );
    assert_eq!(srv.execute(s, &words("SCRIPT FLUSH")), Reply::OK);
    assert_eq!(srv.execute(s, &words(&format!("SCRIPT EXISTS {sha}"))), Reply::Array(vec![Reply::Int(0)]));
    assert!(error_of(&srv.execute(s, &words(&format!("EVALSHA {sha} 1 mykey")))).starts_with("NOSCRIPT"));
    let load = vec![b"SCRIPT".to_vec(), b"LOAD".to_vec(), b"return redis.call('get',KEYS[1])".to_vec()];
    assert_eq!(srv.execute(s, &load), bulk(sha));
    assert_eq!(srv.execute(s, &words(&format!("EVALSHA_RO {sha} 1 mykey"))), bulk("myval"));
    let bad = vec![b"SCRIPT".to_vec(), b"LOAD".to_vec(), b"return +".to_vec()];
    assert!(error_of(&srv.execute(s, &bad)).starts_with("ERR Error compiling script"));
    // numkeys is checked as Redis checks it.
    assert!(error_of(&eval(&srv, s, "return 1", &["2", "a"])).contains("greater than number of args"));
    assert!(error_of(&eval(&srv, s, "return 1", &["-1"])).contains("can't be negative"));
}

#[test]
fn read_only_scripts_refuse_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(srv.execute(s, &words("SET k v")), Reply::OK);
    let ro = |script: &str| vec![b"EVAL_RO".to_vec(), script.as_bytes().to_vec(), b"1".to_vec(), b"k".to_vec()];
    assert_eq!(srv.execute(s, &ro("return redis.call('get', KEYS[1])")), bulk("v"));
    assert_eq!(
        srv.execute(s, &ro("return redis.call('set', KEYS[1], 'w')")),
        Reply::Error("ERR Write commands are not allowed from read-only scripts.".into())
    );
    assert_eq!(srv.execute(s, &words("GET k")), bulk("v"));
}

#[test]
fn a_shebang_line_declares_what_the_script_may_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let set = "redis.call('set', KEYS[1], 'w') return 1";
    assert_eq!(eval(&srv, s, "#!lua\nreturn 1", &["0"]), Reply::Int(1));
    assert!(error_of(&eval(&srv, s, "#!not-lua\nreturn 1", &["0"])).contains("Unexpected engine in script shebang"));
    assert!(error_of(&eval(&srv, s, "#!lua flags=what?\nreturn 1", &["0"])).contains("Unexpected flag"));
    let no_writes = format!("#!lua flags=no-writes\n{set}");
    assert_eq!(
        error_of(&eval(&srv, s, &no_writes, &["1", "k"])),
        "ERR Write commands are not allowed from read-only scripts."
    );
    let ro = srv.execute(s, &[b"EVAL_RO".to_vec(), b"#!lua\nreturn 1".to_vec(), b"0".to_vec()]);
    assert!(error_of(&ro).contains("write flag using *_ro command"), "{ro:?}");
    // Over maxmemory: a flagged script without allow-oom does not start, with it its writes
    // pass; an unflagged one is judged command by command, as before Redis 7.
    assert_eq!(srv.execute(s, &words("SET x 123")), Reply::OK);
    assert_eq!(srv.execute(s, &words("CONFIG SET maxmemory 1")), Reply::OK);
    assert!(error_of(&eval(&srv, s, "#!lua\nreturn 1", &["0"])).starts_with("OOM"));
    assert_eq!(eval(&srv, s, "#!lua flags=no-writes\nreturn 1", &["0"]), Reply::Int(1));
    assert!(error_of(&eval(&srv, s, set, &["1", "k"])).contains("OOM"));
    assert_eq!(eval(&srv, s, &format!("#!lua flags=allow-oom\n{set}"), &["1", "k"]), Reply::Int(1));
    assert!(error_of(&eval(&srv, s, set, &["1", "k"])).contains("OOM"), "the flag lasts one script");
    assert_eq!(srv.execute(s, &words("CONFIG SET maxmemory 0")), Reply::OK);
    assert_eq!(srv.execute(s, &words("GET k")), bulk("w"));
}

#[test]
fn scripts_have_redis_libraries_and_redis_number_arguments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let json = "local t = cjson.decode(ARGV[1]) t.n = t.n + 1 return cjson.encode({t.n, t.s})";
    assert_eq!(eval(&srv, s, json, &["0", r#"{"n": 41, "s": "a/b"}"#]), bulk(r#"[42,"a\/b"]"#));
    let packed = "return cmsgpack.unpack(cmsgpack.pack({ARGV[1], 7}))[2] + bit.band(6, 3)";
    assert_eq!(eval(&srv, s, packed, &["0", "x"]), Reply::Int(9));
    assert!(error_of(&eval(&srv, s, "cjson.encode = nil", &["0"])).contains("readonly table"));
    // A whole number reaches a command in full, not as Lua's %.14g prints it.
    let set = "redis.call('set', KEYS[1], 9007199254740991) return redis.call('get', KEYS[1])";
    assert_eq!(eval(&srv, s, set, &["1", "n"]), bulk("9007199254740991"));
    // A table that holds itself ends in Redis's error, not in a reply without end.
    let mut reply = eval(&srv, s, "local a = {} local b = {a} a[1] = b return a", &["0"]);
    let mut depth = 0;
    while let Reply::Array(mut items) = reply {
        assert_eq!(items.len(), 1);
        reply = items.remove(0);
        depth += 1;
    }
    assert_eq!(reply, Reply::Error("ERR reached lua stack limit".into()), "after {depth} levels");
}

#[test]
fn an_error_a_script_passes_on_is_counted_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let info = |s: &mut Session, section: &str| match srv.execute(s, &words(&format!("INFO {section}"))) {
        Reply::Bulk(b) => String::from_utf8(b).expect("text"),
        Reply::Text(t) => t,
        other => panic!("{other:?}"),
    };
    let has = |text: &str, line: &str| text.lines().any(|l| l.starts_with(line));
    assert_eq!(srv.execute(s, &words("SET x 1")), Reply::OK);
    for (script, code) in [
        ("return redis.call('select', 99)", "ERR"),
        ("return redis.pcall('select', 99)", "ERR"),
        ("return redis.call('lpush', KEYS[1], 'v')", "WRONGTYPE"),
    ] {
        assert_eq!(srv.execute(s, &words("CONFIG RESETSTAT")), Reply::OK);
        assert!(error_of(&eval(&srv, s, script, &["1", "x"])).starts_with(code), "{script}");
        let errors = info(s, "errorstats");
        assert!(has(&errors, &format!("errorstat_{code}:count=1")), "{script}: {errors}");
        assert!(has(&info(s, "stats"), "total_error_replies:1"), "{script}");
        assert!(info(s, "commandstats").contains("cmdstat_eval:calls=1,"), "{script}");
    }
    // A script's own error is the script's, counted once too.
    assert_eq!(srv.execute(s, &words("CONFIG RESETSTAT")), Reply::OK);
    assert!(error_of(&eval(&srv, s, "return redis.error_reply('MY_CODE custom')", &["0"])).starts_with("MY_CODE"));
    assert!(has(&info(s, "errorstats"), "errorstat_MY_CODE:count=1"));
}

#[test]
fn a_script_inside_exec_and_a_select_inside_a_script_stay_in_their_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(srv.execute(s, &words("MULTI")), Reply::OK);
    assert_eq!(eval(&srv, s, "return redis.call('incr', KEYS[1])", &["1", "c"]), Reply::Simple("QUEUED"));
    assert_eq!(srv.execute(s, &words("INCR c")), Reply::Simple("QUEUED"));
    assert_eq!(srv.execute(s, &words("EXEC")), Reply::Array(vec![Reply::Int(1), Reply::Int(2)]));
    assert_eq!(
        eval(&srv, s, "redis.call('select', 2) return redis.call('set', 'k', 'in2')", &["0"]),
        Reply::Status("OK".into())
    );
    assert_eq!(srv.execute(s, &words("EXISTS k")), Reply::Int(0), "the script's SELECT was its own");
    assert_eq!(srv.execute(s, &words("SELECT 2")), Reply::OK);
    assert_eq!(srv.execute(s, &words("GET k")), bulk("in2"));
}

/// A script's writes reach another client all together: a reader never sees one of its two
/// counters moved without the other.
#[test]
fn another_client_never_sees_half_of_a_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(srv.execute(s, &words("MSET a 0 b 0")), Reply::OK);
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (srv, done) = (Arc::clone(&srv), Arc::clone(&done));
        std::thread::spawn(move || {
            let r = &mut Session::new(2);
            let mut reads = 0u64;
            while !done.load(Ordering::Relaxed) {
                let reply = srv.execute(r, &words("MGET a b"));
                let Reply::Array(v) = &reply else { panic!("{reply:?}") };
                assert_eq!(v.first(), v.get(1), "half of a script seen after {reads} reads");
                reads += 1;
            }
            reads
        })
    };
    let script = "for i = 1, 200 do redis.call('incr', KEYS[1]) redis.call('incr', KEYS[2]) end return 1";
    for _ in 0..20 {
        assert_eq!(eval(&srv, s, script, &["2", "a", "b"]), Reply::Int(1));
    }
    done.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("reader");
    assert!(reads > 0);
    assert_eq!(srv.execute(s, &words("MGET a b")), Reply::Array(vec![bulk("4000"), bulk("4000")]));
}

/// Runs `script` on its own thread and session; its reply when it ends.
fn spawn_script(srv: &Arc<Server>, script: &'static str) -> std::thread::JoinHandle<Reply> {
    let srv = Arc::clone(srv);
    std::thread::spawn(move || eval(&srv, &mut Session::new(7), script, &["0"]))
}

/// Ask `s` to PING until it is answered BUSY (at most 60 s: on a loaded machine the
/// script's thread may get little CPU).
fn wait_for_busy(srv: &Server, s: &mut Session) {
    let start = Instant::now();
    while srv.execute(s, &words("PING")) == Reply::Simple("PONG") {
        assert!(start.elapsed() < Duration::from_secs(60), "never busy");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_busy_script_answers_busy_to_others_until_script_kill_stops_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(
        srv.execute(s, &words("SCRIPT KILL")),
        Reply::Error("NOTBUSY No scripts in execution right now.".into())
    );
    assert_eq!(srv.execute(s, &words("CONFIG SET lua-time-limit 10")), Reply::OK);
    assert_eq!(
        srv.execute(s, &words("CONFIG GET busy-reply-threshold")),
        Reply::Map(vec![(bulk("busy-reply-threshold"), bulk("10"))])
    );
    assert_eq!(srv.execute(s, &words("SET xx 1")), Reply::OK);
    // A transaction queued before the script and ended by an EXEC while it is busy is
    // discarded, not half run.
    let t = &mut Session::new(2);
    assert_eq!(srv.execute(t, &words("MULTI")), Reply::OK);
    assert_eq!(srv.execute(t, &words("INCR xx")), Reply::Simple("QUEUED"));
    let looping =
        spawn_script(&srv, "local f = function() while true do redis.call('ping') end end while true do pcall(f) end");
    wait_for_busy(&srv, s);
    let busy = srv.execute(s, &words("GET xx"));
    assert!(error_of(&busy).starts_with("BUSY "), "{busy:?}");
    let exec = srv.execute(t, &words("EXEC"));
    assert!(error_of(&exec).starts_with("EXECABORT Transaction discarded because of: BUSY"), "{exec:?}");
    assert_eq!(srv.execute(s, &words("SCRIPT KILL")), Reply::OK);
    let ended = looping.join().expect("script thread");
    assert!(error_of(&ended).contains("killed by user"), "{ended:?}");
    assert_eq!(srv.execute(s, &words("PING")), Reply::Simple("PONG"));
    assert_eq!(srv.execute(t, &words("PING")), Reply::Simple("PONG"), "no longer in MULTI");
    assert_eq!(srv.execute(s, &words("GET xx")), bulk("1"));
    // A script that wrote cannot be killed; it ends on its own here.
    let writer = spawn_script(&srv, "redis.call('set', 'w', 1) local t = redis.call('time') while redis.call('time')[1] - t[1] < 1 do end return 'done'");
    wait_for_busy(&srv, s);
    assert!(error_of(&srv.execute(s, &words("SCRIPT KILL"))).starts_with("UNKILLABLE"));
    assert_eq!(writer.join().expect("script thread"), bulk("done"));
    assert_eq!(srv.execute(s, &words("GET w")), bulk("1"));
}

/// EXEC takes its queue's key locks and then, for an EVAL in it, the Lua state; a plain
/// EVAL of the same key must take them in the same order, or the two wait on each other
/// forever.
#[test]
fn scripts_inside_and_outside_exec_on_one_key_never_wait_on_each_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let script = "return redis.call('incr', KEYS[1])";
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    for in_exec in [true, false] {
        let (srv, done) = (Arc::clone(&srv), done_tx.clone());
        std::thread::spawn(move || {
            let s = &mut Session::new(if in_exec { 1 } else { 2 });
            for _ in 0..300 {
                if in_exec {
                    assert_eq!(srv.execute(s, &words("MULTI")), Reply::OK);
                    assert_eq!(eval(&srv, s, script, &["1", "k"]), Reply::Simple("QUEUED"));
                    assert!(matches!(srv.execute(s, &words("EXEC")), Reply::Array(_)));
                } else {
                    assert!(matches!(eval(&srv, s, script, &["1", "k"]), Reply::Int(_)));
                }
            }
            let _ = done.send(());
        });
    }
    for _ in 0..2 {
        done_rx.recv_timeout(Duration::from_secs(60)).expect("both clients finish");
    }
    assert_eq!(srv.execute(&mut Session::new(3), &words("GET k")), bulk("600"));
}
