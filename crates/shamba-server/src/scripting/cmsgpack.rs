//! The `cmsgpack` table scripts find, as in Redis (lua-cmsgpack's behaviour): `pack`,
//! `unpack`, `unpack_one` and `unpack_limit`.
//!
//! Packing: a whole number in the 64-bit range as the smallest MessagePack integer that
//! holds it, other numbers as a 32-bit float when that keeps them exactly and a 64-bit one
//! otherwise, strings as str, a table whose keys are exactly 1..n as an array and any other
//! as a map, tables nested deeper than [`MAX_NESTING`] as nil (so a table that holds itself
//! packs to a finite depth), anything else as nil. Unpacking reads every MessagePack type
//! but extensions; binary data becomes a string.

use super::convert::number as lua_number;
use mlua::{Lua, MultiValue, Table, Value};

/// Tables deeper than this pack as nil (lua-cmsgpack's limit).
const MAX_NESTING: usize = 16;

/// Unpacking nests no deeper than this (each level is a Rust call on a thread of the
/// blocking pool, whose 2 MiB stack holds it even in a debug build): the server's stack
/// bounds it, not the input.
const MAX_UNPACK_DEPTH: usize = 256;

/// The table, filled.
pub(super) fn table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            if args.is_empty() {
                return Err(mlua::Error::runtime("MessagePack pack needs input."));
            }
            let mut out = Vec::new();
            for v in args.iter() {
                pack(v, 0, &mut out)?;
            }
            lua.create_string(out)
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, s: mlua::String| {
            let (_, values) = unpack(lua, &s.as_bytes(), 0, 0)?;
            Ok(MultiValue::from_iter(values))
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lua.create_function(|lua, (s, offset): (mlua::String, Option<i64>)| {
            with_offset(lua, unpack(lua, &s.as_bytes(), 1, offset.unwrap_or(0))?)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lua.create_function(|lua, (s, limit, offset): (mlua::String, i64, Option<i64>)| {
            with_offset(lua, unpack(lua, &s.as_bytes(), limit, offset.unwrap_or(0))?)
        })?,
    )?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    Ok(t)
}

/// The offset where unpacking stopped (-1 at the end of the input) and the values.
fn with_offset(lua: &Lua, (next, values): (i64, Vec<Value>)) -> mlua::Result<MultiValue> {
    let mut all = vec![mlua::IntoLua::into_lua(next, lua)?];
    all.extend(values);
    Ok(MultiValue::from_iter(all))
}

fn pack(v: &Value, level: usize, out: &mut Vec<u8>) -> mlua::Result<()> {
    match v {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(_) | Value::Number(_) => number(lua_number(v).unwrap_or_default(), out),
        Value::String(s) => bytes(&s.as_bytes(), out),
        Value::Table(t) if level < MAX_NESTING => table_value(t, level, out)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn number(n: f64, out: &mut Vec<u8>) {
    // Whole and inside i64's range (2^63 itself is not).
    if n.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n) {
        integer(n as i64, out);
    } else if f64::from(n as f32) == n || n.is_nan() {
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn integer(n: i64, out: &mut Vec<u8>) {
    match n {
        0..=127 => out.push(n as u8),
        128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
        0x100..=0xffff => header(0xcd, 2, n as u64, out),
        0x1_0000..=0xffff_ffff => header(0xce, 4, n as u64, out),
        0x1_0000_0000.. => header(0xcf, 8, n as u64, out),
        -32..=-1 => out.push(n as u8),
        -128..=-33 => out.extend_from_slice(&[0xd0, n as u8]),
        -32768..=-129 => header(0xd1, 2, n as u64, out),
        -2_147_483_648..=-32769 => header(0xd2, 4, n as u64, out),
        _ => header(0xd3, 8, n as u64, out),
    }
}

/// A type byte and the low `width` bytes of `n`, big-endian.
fn header(kind: u8, width: usize, n: u64, out: &mut Vec<u8>) {
    out.push(kind);
    out.extend_from_slice(&n.to_be_bytes()[8 - width..]);
}

/// A length: the fix form when it fits `fix_max`, else the 8 (when `b8` is given), 16 or
/// 32-bit form.
fn length(len: usize, fix: u8, fix_max: usize, b8: Option<u8>, b16: u8, b32: u8, out: &mut Vec<u8>) {
    match (len, b8) {
        (0.., _) if len <= fix_max => out.push(fix | len as u8),
        (0..=0xff, Some(k)) => out.extend_from_slice(&[k, len as u8]),
        (0..=0xffff, _) => header(b16, 2, len as u64, out),
        _ => header(b32, 4, len as u64, out),
    }
}

fn bytes(b: &[u8], out: &mut Vec<u8>) {
    length(b.len(), 0xa0, 31, Some(0xd9), 0xda, 0xdb, out);
    out.extend_from_slice(b);
}

fn table_value(t: &Table, level: usize, out: &mut Vec<u8>) -> mlua::Result<()> {
    // An array when the keys are exactly 1..n (an empty table is one).
    let (mut count, mut max) = (0usize, 0f64);
    let mut array = true;
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        match lua_number(&k) {
            Some(k) if k > 0.0 && k.fract() == 0.0 && k <= f64::from(i32::MAX) => max = max.max(k),
            _ => array = false,
        }
        count += 1;
    }
    if array && max as usize == count {
        length(count, 0x90, 15, None, 0xdc, 0xdd, out);
        for i in 1..=count {
            pack(&t.raw_get::<Value>(i)?, level + 1, out)?;
        }
        return Ok(());
    }
    length(count, 0x80, 15, None, 0xde, 0xdf, out);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        pack(&k, level + 1, out)?;
        pack(&v, level + 1, out)?;
    }
    Ok(())
}

/// Up to `limit` values (0: all) from `offset`: where the next one starts (-1 at the end
/// of the input) and the values.
fn unpack(lua: &Lua, input: &[u8], limit: i64, offset: i64) -> mlua::Result<(i64, Vec<Value>)> {
    if offset < 0 || limit < 0 {
        return Err(mlua::Error::runtime("Invalid request to unpack with offset of -1 and limit of -1."));
    }
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    if start > input.len() {
        return Err(mlua::Error::runtime(format!("Start offset {offset} greater than input length {}.", input.len())));
    }
    let mut r = Reader { lua, input, at: start };
    let mut values = Vec::new();
    while r.at < input.len() && (limit == 0 || (values.len() as i64) < limit) {
        values.push(r.value(0)?);
    }
    let next = if r.at >= input.len() { -1 } else { r.at as i64 };
    Ok((next, values))
}

/// MessagePack being read into Lua values.
struct Reader<'a> {
    lua: &'a Lua,
    input: &'a [u8],
    at: usize,
}

fn bad() -> mlua::Error {
    mlua::Error::runtime("Bad data format in input.")
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> mlua::Result<&'a [u8]> {
        let input: &'a [u8] = self.input;
        let end = self.at.checked_add(n).filter(|e| *e <= input.len());
        let bytes =
            end.and_then(|e| input.get(self.at..e)).ok_or_else(|| mlua::Error::runtime("Missing bytes in input."))?;
        self.at += n;
        Ok(bytes)
    }

    /// A big-endian unsigned number of `n` bytes.
    fn uint(&mut self, n: usize) -> mlua::Result<u64> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn value(&mut self, depth: usize) -> mlua::Result<Value> {
        if depth > MAX_UNPACK_DEPTH {
            return Err(bad());
        }
        let kind = *self.take(1)?.first().ok_or_else(bad)?;
        let n = |v: f64| -> mlua::Result<Value> { Ok(Value::Number(v)) };
        match kind {
            0x00..=0x7f => n(f64::from(kind)),
            0xe0..=0xff => n(f64::from(kind as i8)),
            0xc0 => Ok(Value::Nil),
            0xc2 => Ok(Value::Boolean(false)),
            0xc3 => Ok(Value::Boolean(true)),
            0xcc => n(self.uint(1)? as f64),
            0xcd => n(self.uint(2)? as f64),
            0xce => n(self.uint(4)? as f64),
            0xcf => n(self.uint(8)? as f64),
            0xd0 => n(f64::from(self.uint(1)? as u8 as i8)),
            0xd1 => n(f64::from(self.uint(2)? as u16 as i16)),
            0xd2 => n(f64::from(self.uint(4)? as u32 as i32)),
            0xd3 => n(self.uint(8)? as i64 as f64),
            0xca => n(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => n(f64::from_bits(self.uint(8)?)),
            0xa0..=0xbf => self.string(usize::from(kind & 0x1f)),
            0xd9 | 0xc4 => {
                let len = self.uint(1)? as usize;
                self.string(len)
            }
            0xda | 0xc5 => {
                let len = self.uint(2)? as usize;
                self.string(len)
            }
            0xdb | 0xc6 => {
                let len = self.uint(4)? as usize;
                self.string(len)
            }
            0x90..=0x9f => self.array(usize::from(kind & 0x0f), depth),
            0xdc => {
                let len = self.uint(2)? as usize;
                self.array(len, depth)
            }
            0xdd => {
                let len = self.uint(4)? as usize;
                self.array(len, depth)
            }
            0x80..=0x8f => self.map(usize::from(kind & 0x0f), depth),
            0xde => {
                let len = self.uint(2)? as usize;
                self.map(len, depth)
            }
            0xdf => {
                let len = self.uint(4)? as usize;
                self.map(len, depth)
            }
            _ => Err(bad()),
        }
    }

    fn string(&mut self, len: usize) -> mlua::Result<Value> {
        let bytes = self.take(len)?;
        Ok(Value::String(self.lua.create_string(bytes)?))
    }

    fn array(&mut self, len: usize, depth: usize) -> mlua::Result<Value> {
        // Each element takes a byte at least: a length past the input is short of bytes
        // before a table of that size is made.
        if len > self.input.len() - self.at {
            return Err(mlua::Error::runtime("Missing bytes in input."));
        }
        let t = self.lua.create_table_with_capacity(len, 0)?;
        for i in 1..=len {
            t.raw_set(i, self.value(depth + 1)?)?;
        }
        Ok(Value::Table(t))
    }

    fn map(&mut self, len: usize, depth: usize) -> mlua::Result<Value> {
        if len.saturating_mul(2) > self.input.len() - self.at {
            return Err(mlua::Error::runtime("Missing bytes in input."));
        }
        let t = self.lua.create_table_with_capacity(0, len)?;
        for _ in 0..len {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            // Nil (or NaN) cannot be a key: such a pair is dropped.
            if !matches!(k, Value::Nil) && lua_number(&k).is_none_or(|k| !k.is_nan()) {
                t.raw_set(k, v)?;
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
        lua.globals().set("cmsgpack", table(&lua).unwrap()).unwrap();
        lua
    }

    fn hex(lua: &Lua, expr: &str) -> String {
        let s: mlua::String = lua.load(format!("return cmsgpack.pack({expr})")).eval().unwrap();
        s.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn values_pack_to_the_smallest_form() {
        let lua = lua();
        assert_eq!(hex(&lua, "0.1"), "cb3fb999999999999a");
        assert_eq!(hex(&lua, "0.5"), "ca3f000000");
        assert_eq!(hex(&lua, "-1099511627776"), "d3ffffff0000000000");
        assert_eq!(hex(&lua, "5, -1, -33, 200, 70000"), "05ffd0dfccc8ce00011170");
        assert_eq!(hex(&lua, "'ab', true, nil"), "a26162c3c0");
        assert_eq!(hex(&lua, "{}"), "90");
        assert_eq!(hex(&lua, "{1, 2}"), "920102");
        assert_eq!(hex(&lua, "{a=1}"), "81a16101");
        assert_eq!(hex(&lua, "string.rep('x', 40)").get(..4), Some("d928"));
    }

    #[test]
    fn a_table_that_holds_itself_packs_to_sixteen_levels() {
        let lua = lua();
        let s = hex(&lua, "(function() local t = {} t[1] = t return t end)()");
        assert_eq!(s, format!("{}c0", "91".repeat(16)));
    }

    #[test]
    fn unpacking_reads_back_what_was_packed() {
        let lua = lua();
        let ok: bool = lua
            .load(
                r#"local big = {} for i = 1, 70000 do big[i] = i end
                local t = {s = string.rep("y", 70000), d = 0.1, i = 2^40, n = -3147483648, a = big, m = {k = false}}
                local u = cmsgpack.unpack(cmsgpack.pack(t))
                return #u.s == 70000 and u.d == 0.1 and u.i == 2^40 and u.n == -3147483648 and #u.a == 70000
                    and u.a[70000] == 70000 and u.m.k == false"#,
            )
            .eval()
            .unwrap();
        assert!(ok);
        let ok: bool = lua
            .load(
                r#"local s = cmsgpack.pack("a", "bb", "ccc")
                local o1, a = cmsgpack.unpack_one(s, 0)
                local o2, b = cmsgpack.unpack_limit(s, 1, o1)
                local o3, c = cmsgpack.unpack_limit(s, 1, o2)
                local x, y, z = cmsgpack.unpack(s)
                return a == "a" and b == "bb" and c == "ccc" and o1 == 2 and o2 == 5 and o3 == -1
                    and x == "a" and z == "ccc""#,
            )
            .eval()
            .unwrap();
        assert!(ok);
    }

    #[test]
    fn damaged_input_is_an_error_not_a_crash() {
        let lua = lua();
        for bad in ["\\220\\255\\255", "\\221\\127\\255\\255\\255", "\\203\\1", "\\193", "\\217\\9abc"] {
            let e = lua.load(format!("return cmsgpack.unpack('{bad}')")).eval::<Value>();
            assert!(e.is_err(), "{bad} unpacked");
        }
        let deep = format!("return cmsgpack.unpack(string.rep('\\145', {}) .. '\\1')", MAX_UNPACK_DEPTH + 10);
        let e = lua.load(deep).eval::<Value>().unwrap_err().to_string();
        assert!(e.contains("Bad data format"), "{e}");
        assert!(lua.load("return cmsgpack.unpack_one('\\1', 5)").eval::<Value>().is_err());
    }
}
