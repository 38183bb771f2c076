//! Replies to Lua values and Lua values to replies, as Redis converts them (RESP2).
//!
//! To Lua: integer → number, bulk → string, nil bulk or nil array → false, array → table
//! (maps flattened, as RESP2 sends them), status → `{ok=...}`, error → `{err=...}`,
//! double → string. To a reply: number → integer (truncated), string → bulk, true → 1,
//! false and nil → nil bulk, a table with `ok` → status, with `err` → error, any other
//! table → array of its elements 1, 2, ... up to the first nil.

use crate::reply::{format_double, Reply};
use mlua::{Lua, Table, Value};

/// Deepest nesting converted either way (Redis stops at its own depth too), so a table that
/// holds itself cannot loop: a deeper reply becomes false in Lua, a deeper Lua table the
/// error Redis answers there.
const MAX_DEPTH: usize = 64;

/// A command's reply as the Lua value a script receives.
pub(super) fn to_lua(lua: &Lua, reply: &Reply) -> mlua::Result<Value> {
    to_lua_at(lua, reply, 0)
}

fn to_lua_at(lua: &Lua, reply: &Reply, depth: usize) -> mlua::Result<Value> {
    if depth > MAX_DEPTH {
        return Ok(Value::Boolean(false));
    }
    let one_field = |name: &str, text: &str| -> mlua::Result<Value> {
        let t = lua.create_table()?;
        t.raw_set(name, lua.create_string(text)?)?;
        Ok(Value::Table(t))
    };
    Ok(match reply {
        Reply::Simple(s) => one_field("ok", s)?,
        Reply::Status(s) => one_field("ok", s)?,
        Reply::Error(e) => one_field("err", e)?,
        Reply::Int(i) => Value::Number(*i as f64),
        Reply::Double(d) => Value::String(lua.create_string(format_double(*d))?),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Text(t) => Value::String(lua.create_string(t)?),
        Reply::Null | Reply::NullArray => Value::Boolean(false),
        Reply::Array(items) | Reply::Push(items) | Reply::Frames(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua_at(lua, item, depth + 1)?)?;
            }
            Value::Table(t)
        }
        Reply::Map(pairs) => {
            let t = lua.create_table_with_capacity(pairs.len() * 2, 0)?;
            for (i, (k, v)) in pairs.iter().enumerate() {
                t.raw_set(2 * i + 1, to_lua_at(lua, k, depth + 1)?)?;
                t.raw_set(2 * i + 2, to_lua_at(lua, v, depth + 1)?)?;
            }
            Value::Table(t)
        }
    })
}

/// A script's value as the reply its client receives.
pub(super) fn to_reply(value: &Value) -> Reply {
    to_reply_at(value, 0)
}

fn to_reply_at(value: &Value, depth: usize) -> Reply {
    if depth > MAX_DEPTH {
        // Redis's words when its Lua stack runs out converting a deep (or looping) table.
        return Reply::err("reached lua stack limit");
    }
    match value {
        Value::Boolean(true) => Reply::Int(1),
        Value::Integer(i) => Reply::Int(*i),
        // Truncated toward zero, as C's cast (out of range saturates).
        Value::Number(n) => Reply::Int(*n as i64),
        Value::String(s) => Reply::Bulk(s.as_bytes().to_vec()),
        Value::Table(t) => table_to_reply(t, depth),
        _ => Reply::Null,
    }
}

fn table_to_reply(t: &Table, depth: usize) -> Reply {
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        return error_reply(&e.to_string_lossy());
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
        return Reply::Status(s.to_string_lossy());
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(to_reply_at(&v, depth + 1)),
        }
    }
    Reply::Array(items)
}

/// An error a script returned or raised, as a reply: its text as it is (its first word is
/// its code), `ERR` when empty.
pub(super) fn error_reply(text: &str) -> Reply {
    let text = text.strip_prefix('-').unwrap_or(text);
    if text.is_empty() {
        return Reply::Error("ERR".into());
    }
    Reply::Error(text.to_string())
}

/// A Lua number's value: mlua hands Lua 5.1's numbers over as integers when they are
/// whole, as floats otherwise.
pub(super) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// The name Lua's `type()` gives `v`'s type.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Integer(_) | Value::Number(_) => "number",
        Value::LightUserData(_) => "userdata",
        other => other.type_name(),
    }
}

/// A number given to `redis.call` as Redis 7 writes it (the shortest text that reads back
/// the same): a whole number below 10^17 in full (`9007199254740991`, where Lua's own
/// `%.14g` would round it), `0.1` as `0.1`, very large or small ones with an exponent.
pub(super) fn number_argument(n: f64) -> String {
    if !n.is_finite() {
        return if n.is_nan() {
            "nan".into()
        } else if n > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if n.fract() == 0.0 && n.abs() < 1e17 {
        return format!("{}", n as i64);
    }
    if (1e-5..1e17).contains(&n.abs()) {
        return format!("{n}");
    }
    let sci = format!("{n:e}");
    match sci.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => sci,
    }
}

#[cfg(test)]
mod tests {
    use super::number_argument;

    #[test]
    fn numbers_reach_commands_in_their_shortest_full_form() {
        assert_eq!(number_argument(9007199254740991.0), "9007199254740991");
        assert_eq!(number_argument(-3.0), "-3");
        assert_eq!(number_argument(0.1), "0.1");
        assert_eq!(number_argument(1023.2), "1023.2");
        assert_eq!(number_argument(1e21), "1e+21");
        assert_eq!(number_argument(2.5e-7), "2.5e-7");
        assert_eq!(number_argument(f64::INFINITY), "inf");
    }
}
