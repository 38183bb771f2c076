//! The `cjson` table scripts find, as in Redis (lua-cjson 2.1's behaviour): `encode`,
//! `decode`, `null` and the settings functions.
//!
//! Encoding: a table whose keys are all positive integers is an array (missing elements
//! are `null`; an excessively sparse one, or one of more than 2^20 holes whatever is
//! set, is an error unless converted to an object), any
//! other non-empty table an object whose keys must be strings or numbers, an empty table
//! `{}`; numbers as `%.14g`, NaN and infinities an error unless allowed; strings escaped
//! as lua-cjson escapes them (`/` included), other bytes as they are. Decoding: JSON's
//! values, `null` as `cjson.null`, numbers as Lua numbers. Nesting deeper than the set
//! depth is an error both ways (and never deeper than [`HARD_DEPTH`], whatever is set, so
//! a script cannot make the server's stack overflow).

use super::convert::{number as lua_number, type_name};
use crate::reply::format_g;
use mlua::{LightUserData, Lua, Table, Value};
use parking_lot::Mutex;
use std::sync::Arc;

/// No array is written with more missing elements (`null`s) than this, whatever is set.
const MAX_HOLES: f64 = 1_048_576.0;

/// No setting nests deeper than this (lua-cjson's default and usual limit is 1000, past
/// which it stops at Lua's C stack): each level is a Rust call, and a script runs on a
/// thread of the blocking pool, whose stack (2 MiB) holds 256 levels even in a debug build.
const HARD_DEPTH: u32 = 256;

/// The settings scripts change with `cjson.encode_max_depth(n)` and the like (per
/// server, as Redis's one Lua state has them).
#[derive(Debug, Clone, Copy)]
struct Settings {
    encode_max_depth: u32,
    decode_max_depth: u32,
    /// 0: an error; 1: written (`nan`, `inf`); 2: written as `null`.
    encode_invalid_numbers: u8,
    decode_invalid_numbers: bool,
    encode_number_precision: u32,
    sparse_convert: bool,
    sparse_ratio: u32,
    sparse_safe: u32,
    keep_buffer: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            encode_max_depth: HARD_DEPTH,
            decode_max_depth: HARD_DEPTH,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: true,
            encode_number_precision: 14,
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            keep_buffer: true,
        }
    }
}

/// `cjson.null`: a light userdata holding NULL, as lua-cjson's.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// The table, filled.
pub(super) fn table(lua: &Lua) -> mlua::Result<Table> {
    let settings = Arc::new(Mutex::new(Settings::default()));
    let t = lua.create_table()?;
    let s = Arc::clone(&settings);
    t.raw_set(
        "encode",
        lua.create_function(move |lua, v: Value| {
            let mut out = Vec::new();
            encode(&v, &s.lock(), 0, &mut out)?;
            lua.create_string(out)
        })?,
    )?;
    let s = Arc::clone(&settings);
    t.raw_set(
        "decode",
        lua.create_function(move |lua, text: mlua::String| {
            let settings = *s.lock();
            let bytes = text.as_bytes();
            let mut d = Decoder { lua, text: &bytes, at: 0, settings };
            let value = d.value(0)?;
            d.skip_space();
            if d.at < bytes.len() {
                return Err(d.error("the end", "trailing bytes"));
            }
            Ok(value)
        })?,
    )?;
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    let depth = |get: fn(&mut Settings) -> &mut u32| {
        let s = Arc::clone(&settings);
        lua.create_function(move |_, n: Option<f64>| {
            let mut s = s.lock();
            if let Some(n) = n {
                if !(1.0..=f64::from(i32::MAX)).contains(&n) {
                    return Err(mlua::Error::runtime("bad argument #1 (expected integer between 1 and 2147483647)"));
                }
                *get(&mut s) = (n as u32).min(HARD_DEPTH);
            }
            Ok(*get(&mut s))
        })
    };
    t.raw_set("encode_max_depth", depth(|s| &mut s.encode_max_depth)?)?;
    t.raw_set("decode_max_depth", depth(|s| &mut s.decode_max_depth)?)?;
    let s = Arc::clone(&settings);
    t.raw_set(
        "encode_number_precision",
        lua.create_function(move |_, n: Option<f64>| {
            let mut s = s.lock();
            if let Some(n) = n {
                if !(1.0..=14.0).contains(&n) {
                    return Err(mlua::Error::runtime("bad argument #1 (expected integer between 1 and 14)"));
                }
                s.encode_number_precision = n as u32;
            }
            Ok(s.encode_number_precision)
        })?,
    )?;
    let s = Arc::clone(&settings);
    t.raw_set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, v: Option<Value>| {
            let mut s = s.lock();
            match v {
                None => {}
                Some(Value::Boolean(b)) => s.encode_invalid_numbers = u8::from(b),
                Some(Value::String(w)) if w.as_bytes() == b"null" => s.encode_invalid_numbers = 2,
                Some(Value::String(w)) if w.as_bytes() == b"on" => s.encode_invalid_numbers = 1,
                Some(Value::String(w)) if w.as_bytes() == b"off" => s.encode_invalid_numbers = 0,
                Some(_) => return Err(mlua::Error::runtime("bad argument #1 (invalid option)")),
            }
            Ok(match s.encode_invalid_numbers {
                0 => Value::Boolean(false),
                1 => Value::Boolean(true),
                _ => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    let flag = |get: fn(&mut Settings) -> &mut bool| {
        let s = Arc::clone(&settings);
        lua.create_function(move |_, v: Option<Value>| {
            let mut s = s.lock();
            match v {
                None => {}
                Some(Value::Boolean(b)) => *get(&mut s) = b,
                Some(Value::String(w)) if matches!(w.as_bytes().as_ref(), b"on" | b"off") => {
                    *get(&mut s) = w.as_bytes().as_ref() == b"on";
                }
                Some(_) => return Err(mlua::Error::runtime("bad argument #1 (invalid option)")),
            }
            Ok(*get(&mut s))
        })
    };
    t.raw_set("decode_invalid_numbers", flag(|s| &mut s.decode_invalid_numbers)?)?;
    t.raw_set("encode_keep_buffer", flag(|s| &mut s.keep_buffer)?)?;
    let s = Arc::clone(&settings);
    t.raw_set(
        "encode_sparse_array",
        lua.create_function(move |_, (convert, ratio, safe): (Option<bool>, Option<u32>, Option<u32>)| {
            let mut s = s.lock();
            if let Some(c) = convert {
                s.sparse_convert = c;
            }
            if let Some(r) = ratio {
                s.sparse_ratio = r;
            }
            if let Some(n) = safe {
                s.sparse_safe = n;
            }
            Ok((s.sparse_convert, s.sparse_ratio, s.sparse_safe))
        })?,
    )?;
    Ok(t)
}

fn cannot(what: &str, why: &str) -> mlua::Error {
    mlua::Error::runtime(format!("Cannot serialise {what}: {why}"))
}

fn encode(v: &Value, s: &Settings, depth: u32, out: &mut Vec<u8>) -> mlua::Result<()> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => number(*i as f64, s, out)?,
        Value::Number(n) => number(*n, s, out)?,
        Value::String(text) => string(&text.as_bytes(), out),
        Value::Table(t) => {
            let depth = depth + 1;
            if depth > s.encode_max_depth {
                return Err(mlua::Error::runtime(format!("Cannot serialise, excessive nesting ({depth})")));
            }
            match array_length(t, s)? {
                Some(len) => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        encode(&t.raw_get::<Value>(i)?, s, depth, out)?;
                    }
                    out.push(b']');
                }
                None => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Value, Value>() {
                        let (k, v) = pair?;
                        if !std::mem::take(&mut first) {
                            out.push(b',');
                        }
                        match &k {
                            Value::String(key) => string(&key.as_bytes(), out),
                            Value::Integer(_) | Value::Number(_) => {
                                out.push(b'"');
                                number(lua_number(&k).unwrap_or_default(), s, out)?;
                                out.push(b'"');
                            }
                            _ => return Err(cannot("table", "table key must be a number or string")),
                        }
                        out.push(b':');
                        encode(&v, s, depth, out)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => return Err(cannot(type_name(other), "type not supported")),
    }
    Ok(())
}

/// `Some(n)` when every key of `t` is a positive integer (n the largest), `None` when `t`
/// is to be an object (an empty table is one). An excessively sparse array is an object
/// when converting is on, an error otherwise.
fn array_length(t: &Table, s: &Settings) -> mlua::Result<Option<usize>> {
    let (mut max, mut items) = (0f64, 0f64);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        let Some(k) = lua_number(&k).filter(|k| *k >= 1.0 && k.fract() == 0.0 && *k <= f64::from(u32::MAX)) else {
            return Ok(None);
        };
        max = max.max(k);
        items += 1.0;
    }
    if max == 0.0 {
        return Ok(None);
    }
    let ratio = f64::from(s.sparse_ratio);
    // With the ratio check off (a ratio of 0), a lone key of 4e9 would still make an array
    // of four billion nulls, written in a loop SCRIPT KILL cannot stop: holes past
    // [`MAX_HOLES`] count as excessively sparse whatever is set.
    let too_sparse = s.sparse_ratio > 0 && max > items * ratio && max > f64::from(s.sparse_safe);
    if too_sparse || max - items > MAX_HOLES {
        return match s.sparse_convert {
            true => Ok(None),
            false => Err(cannot("table", "excessively sparse array")),
        };
    }
    Ok(Some(max as usize))
}

fn number(n: f64, s: &Settings, out: &mut Vec<u8>) -> mlua::Result<()> {
    if !n.is_finite() {
        match s.encode_invalid_numbers {
            0 => return Err(cannot("number", "must not be NaN or Inf")),
            2 => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {
                let text: &[u8] = match (n.is_nan(), n > 0.0) {
                    (true, _) => b"nan",
                    (false, true) => b"inf",
                    (false, false) => b"-inf",
                };
                out.extend_from_slice(text);
                return Ok(());
            }
        }
    }
    if n == 0.0 {
        out.extend_from_slice(if n.is_sign_negative() { b"-0" } else { b"0" });
        return Ok(());
    }
    out.extend_from_slice(format_g(n, s.encode_number_precision as usize).as_bytes());
    Ok(())
}

/// A JSON string of `bytes`, escaped as lua-cjson escapes (bytes from 0x80 as they are).
fn string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// A JSON text being read into Lua values.
struct Decoder<'a> {
    lua: &'a Lua,
    text: &'a [u8],
    at: usize,
    settings: Settings,
}

impl Decoder<'_> {
    fn error(&self, expected: &str, found: &str) -> mlua::Error {
        mlua::Error::runtime(format!("Expected {expected} but found {found} at character {}", self.at + 1))
    }

    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn nest(&self, depth: u32) -> mlua::Result<u32> {
        let depth = depth + 1;
        if depth > self.settings.decode_max_depth {
            return Err(mlua::Error::runtime(format!(
                "Found too many nested data structures ({depth}) at character {}",
                self.at + 1
            )));
        }
        Ok(depth)
    }

    fn value(&mut self, depth: u32) -> mlua::Result<Value> {
        self.skip_space();
        let rest = self.text.get(self.at..).unwrap_or_default();
        match rest.first() {
            Some(b'{') => self.object(self.nest(depth)?),
            Some(b'[') => self.array(self.nest(depth)?),
            Some(b'"') => Ok(Value::String(self.lua.create_string(self.string()?)?)),
            Some(b't') if rest.starts_with(b"true") => self.word(4, Value::Boolean(true)),
            Some(b'f') if rest.starts_with(b"false") => self.word(5, Value::Boolean(false)),
            Some(b'n') if rest.starts_with(b"null") => self.word(4, null()),
            Some(_) => self.number(),
            None => Err(self.error("value", "the end")),
        }
    }

    fn word(&mut self, len: usize, v: Value) -> mlua::Result<Value> {
        self.at += len;
        Ok(v)
    }

    fn number(&mut self) -> mlua::Result<Value> {
        let start = self.at;
        let rest = self.text.get(start..).unwrap_or_default();
        let len = rest.iter().take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count();
        let word = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')).count();
        let token = std::str::from_utf8(rest.get(..word).unwrap_or_default()).unwrap_or_default();
        let invalid = match token.trim_start_matches('-').to_ascii_lowercase().as_str() {
            "nan" => Some(f64::NAN),
            "inf" | "infinity" => Some(if token.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY }),
            _ => None,
        };
        if let Some(n) = invalid.filter(|_| self.settings.decode_invalid_numbers) {
            self.at += word;
            return Ok(Value::Number(n));
        }
        let digits = std::str::from_utf8(rest.get(..len).unwrap_or_default()).unwrap_or_default();
        match digits.parse::<f64>() {
            Ok(n) if len > 0 => {
                self.at += len;
                Ok(Value::Number(n))
            }
            _ => Err(self.error("value", "invalid token")),
        }
    }

    /// A string's bytes, its escapes resolved (`\u` as UTF-8, surrogate pairs joined).
    fn string(&mut self) -> mlua::Result<Vec<u8>> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.text.get(self.at) else {
                return Err(self.error("string end", "the end"));
            };
            self.at += 1;
            match b {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.text.get(self.at) else {
                        return Err(self.error("escape", "the end"));
                    };
                    self.at += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let mut c = self.hex4()?;
                            if (0xd800..0xdc00).contains(&c) && self.text.get(self.at..self.at + 2) == Some(b"\\u") {
                                self.at += 2;
                                let low = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&low) {
                                    return Err(self.error("low surrogate", "invalid unicode escape"));
                                }
                                c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
                            }
                            let ch = char::from_u32(c).ok_or_else(|| self.error("string", "invalid unicode escape"))?;
                            out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
                        }
                        _ => return Err(self.error("string", "invalid escape code")),
                    }
                }
                _ => out.push(b),
            }
        }
    }

    fn hex4(&mut self) -> mlua::Result<u32> {
        let digits = self.text.get(self.at..self.at + 4).and_then(|d| std::str::from_utf8(d).ok());
        let c = digits
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("string", "invalid unicode escape"))?;
        self.at += 4;
        Ok(c)
    }

    fn array(&mut self, depth: u32) -> mlua::Result<Value> {
        self.at += 1;
        let t = self.lua.create_table()?;
        self.skip_space();
        if self.text.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Value::Table(t));
        }
        for i in 1.. {
            let v = self.value(depth)?;
            t.raw_set(i, v)?;
            self.skip_space();
            match self.text.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.error("comma or array end", "invalid token")),
            }
        }
        Ok(Value::Table(t))
    }

    fn object(&mut self, depth: u32) -> mlua::Result<Value> {
        self.at += 1;
        let t = self.lua.create_table()?;
        self.skip_space();
        if self.text.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Value::Table(t));
        }
        loop {
            self.skip_space();
            if self.text.get(self.at) != Some(&b'"') {
                return Err(self.error("object key string", "invalid token"));
            }
            let key = self.lua.create_string(self.string()?)?;
            self.skip_space();
            if self.text.get(self.at) != Some(&b':') {
                return Err(self.error("colon", "invalid token"));
            }
            self.at += 1;
            let v = self.value(depth)?;
            t.raw_set(key, v)?;
            self.skip_space();
            match self.text.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.error("comma or object end", "invalid token")),
            }
        }
        Ok(Value::Table(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lua() -> Lua {
        let lua = Lua::new();
        lua.globals().set("cjson", table(&lua).unwrap()).unwrap();
        lua
    }

    fn text(lua: &Lua, code: &str) -> String {
        lua.load(code).eval::<mlua::String>().unwrap().to_str().unwrap().to_string()
    }

    #[test]
    fn values_encode_as_lua_cjson_writes_them() {
        let lua = lua();
        assert_eq!(text(&lua, r#"return cjson.encode({1, 2, "a/b", true, cjson.null})"#), r#"[1,2,"a\/b",true,null]"#);
        assert_eq!(text(&lua, "return cjson.encode({})"), "{}");
        assert_eq!(text(&lua, "return cjson.encode({[1]=1, [3]=3})"), "[1,null,3]");
        assert_eq!(text(&lua, "return cjson.encode({one='one'})"), r#"{"one":"one"}"#);
        assert_eq!(text(&lua, "return cjson.encode({[2.5]='x'})"), r#"{"2.5":"x"}"#);
        assert_eq!(text(&lua, "return cjson.encode(0.1)"), "0.1");
        assert_eq!(text(&lua, "return cjson.encode(1/3)"), "0.33333333333333");
        assert_eq!(text(&lua, "return cjson.encode(1e20)"), "1e+20");
        assert_eq!(text(&lua, "return cjson.encode('\\1\\n\"')"), r#""\u0001\n\"""#);
        let huge = lua.load("cjson.encode_sparse_array(false, 0) return cjson.encode({[4e9]=1})").eval::<Value>();
        assert!(huge.unwrap_err().to_string().contains("excessively sparse array"), "holes are bounded");
        lua.load("cjson.encode_sparse_array(false, 2, 10)").exec().unwrap();
        let sparse = lua.load("return cjson.encode({[20]=1})").eval::<Value>().unwrap_err().to_string();
        assert!(sparse.contains("Cannot serialise table: excessively sparse array"), "{sparse}");
        let key = lua.load("return cjson.encode({[true]=1})").eval::<Value>().unwrap_err().to_string();
        assert!(key.contains("table key must be a number or string"), "{key}");
        let f = lua.load("return cjson.encode(print)").eval::<Value>().unwrap_err().to_string();
        assert!(f.contains("Cannot serialise function: type not supported"), "{f}");
    }

    #[test]
    fn invalid_numbers_and_depth_follow_the_settings() {
        let lua = lua();
        assert!(lua.load("return cjson.encode(0/0)").eval::<Value>().is_err());
        assert_eq!(text(&lua, "cjson.encode_invalid_numbers(true) return cjson.encode(1/0)"), "inf");
        assert_eq!(text(&lua, "cjson.encode_invalid_numbers('null') return cjson.encode(0/0)"), "null");
        assert!(lua.load("cjson.encode_max_depth(1) return cjson.encode({{}})").eval::<Value>().is_err());
        assert_eq!(text(&lua, "cjson.encode_max_depth(2) return cjson.encode({{}})"), "[{}]");
        assert!(lua.load(r#"cjson.decode_max_depth(1) return cjson.decode('[[1]]')"#).eval::<Value>().is_err());
        // A table that holds itself stops at the depth, never at the stack.
        let e = lua.load("cjson.encode_max_depth(1e9) local t = {} t[1] = t return cjson.encode(t)").eval::<Value>();
        assert!(e.unwrap_err().to_string().contains("excessive nesting (257)"));
    }

    #[test]
    fn decoding_gives_lua_values() {
        let lua = lua();
        let s = text(&lua, r#"return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")"#);
        assert_eq!(s, "0 -5000 -1 0.0003 1023.2 0");
        let t = text(
            &lua,
            r#"local d = cjson.decode('{"a": "\\u00e9\\ud83d\\ude00", "b": [true, null]}')
            return d.a .. tostring(d.b[1]) .. tostring(d.b[2] == cjson.null)"#,
        );
        assert_eq!(t, "é😀truetrue");
        for bad in ["[1,", "{1:2}", "[1] x", "\"abc", "tru", ""] {
            let e = lua.load(format!("return cjson.decode('{bad}')")).eval::<Value>();
            assert!(e.is_err(), "{bad} decoded");
        }
        let e = lua.load("return cjson.decode('[1 2]')").eval::<Value>().unwrap_err().to_string();
        assert!(e.contains("Expected comma or array end but found invalid token at character 4"), "{e}");
    }

    #[test]
    fn a_round_trip_keeps_the_table() {
        let lua = lua();
        let ok = lua
            .load(
                r#"local t = {s="x", n=100, a={"p","q"}, b=false, m={k={1,2,{z=1}}}}
                local d = cjson.decode(cjson.encode(t))
                return d.s == "x" and d.n == 100 and d.a[2] == "q" and d.b == false and d.m.k[3].z == 1"#,
            )
            .eval::<bool>()
            .unwrap();
        assert!(ok);
    }
}
