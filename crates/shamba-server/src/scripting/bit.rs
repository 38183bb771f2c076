//! The `bit` table scripts find, as in Redis (LuaBitOp's functions): numbers are taken as
//! 32-bit integers (rounded, then wrapped modulo 2^32) and every result is a signed 32-bit
//! integer.

use mlua::{Lua, MultiValue, Table, Value};

/// The table, filled.
pub(super) fn table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("tobit", lua.create_function(|_, x: Value| word(&x, 1, "tobit"))?)?;
    t.raw_set("bnot", lua.create_function(|_, x: Value| Ok(!word(&x, 1, "bnot")?))?)?;
    t.raw_set("bswap", lua.create_function(|_, x: Value| Ok(word(&x, 1, "bswap")?.swap_bytes()))?)?;
    t.raw_set("band", fold(lua, "band", |a, b| a & b)?)?;
    t.raw_set("bor", fold(lua, "bor", |a, b| a | b)?)?;
    t.raw_set("bxor", fold(lua, "bxor", |a, b| a ^ b)?)?;
    t.raw_set("lshift", shift(lua, "lshift", |x, n| x.wrapping_shl(n))?)?;
    t.raw_set("rshift", shift(lua, "rshift", |x, n| ((x as u32) >> n) as i32)?)?;
    t.raw_set("arshift", shift(lua, "arshift", |x, n| x >> n)?)?;
    t.raw_set("rol", shift(lua, "rol", |x, n| x.rotate_left(n))?)?;
    t.raw_set("ror", shift(lua, "ror", |x, n| x.rotate_right(n))?)?;
    t.raw_set(
        "tohex",
        lua.create_function(|_, (x, n): (Value, Option<Value>)| {
            let x = word(&x, 1, "tohex")?;
            let n = match n {
                Some(n) => word(&n, 2, "tohex")?,
                None => 8,
            };
            let digits = n.unsigned_abs().min(8) as usize;
            let masked = if digits == 8 { x as u32 } else { (x as u32) & ((1u32 << (4 * digits)) - 1) };
            Ok(match n < 0 {
                true => format!("{masked:0digits$X}"),
                false => format!("{masked:0digits$x}"),
            })
        })?,
    )?;
    Ok(t)
}

/// A function of one or more numbers folded with `op`.
fn fold(lua: &Lua, name: &'static str, op: fn(i32, i32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, args: MultiValue| {
        let first = word(args.front().unwrap_or(&Value::Nil), 1, name)?;
        args.iter().enumerate().skip(1).try_fold(first, |acc, (i, v)| Ok(op(acc, word(v, i + 1, name)?)))
    })
}

/// A function of a number and a shift count (its low five bits).
fn shift(lua: &Lua, name: &'static str, op: fn(i32, u32) -> i32) -> mlua::Result<mlua::Function> {
    lua.create_function(move |_, (x, n): (Value, Value)| {
        let x = word(&x, 1, name)?;
        let n = (word(&n, 2, name)? & 31) as u32;
        Ok(op(x, n))
    })
}

/// Argument `pos` of `name` as a 32-bit integer: a number (or a string holding one),
/// rounded half to even and wrapped modulo 2^32, as LuaBitOp converts.
fn word(v: &Value, pos: usize, name: &str) -> mlua::Result<i32> {
    let n = match v {
        Value::Integer(i) => return Ok(*i as i32),
        Value::Number(n) => *n,
        Value::String(s) => {
            s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()).ok_or_else(|| expected(pos, name, v))?
        }
        _ => return Err(expected(pos, name, v)),
    };
    Ok(n.round_ties_even().rem_euclid(4_294_967_296.0) as u64 as u32 as i32)
}

fn expected(pos: usize, name: &str, v: &Value) -> mlua::Error {
    mlua::Error::runtime(format!(
        "bad argument #{pos} to '{name}' (number expected, got {})",
        super::convert::type_name(v)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(code: &str) -> Value {
        let lua = Lua::new();
        lua.globals().set("bit", table(&lua).unwrap()).unwrap();
        lua.load(code).eval().unwrap()
    }

    #[test]
    fn results_are_signed_32_bit_words() {
        assert_eq!(eval("return bit.tobit(0xffffffff)").as_i64(), Some(-1));
        assert_eq!(eval("return bit.tobit(2^32 + 5)").as_i64(), Some(5));
        assert_eq!(eval("return bit.bor(1,2,4,8,16,32,64,128)").as_i64(), Some(255));
        assert_eq!(eval("return bit.band(1)").as_i64(), Some(1));
        assert_eq!(eval("return bit.bxor(1, 2)").as_i64(), Some(3));
        assert_eq!(eval("return bit.bnot(0)").as_i64(), Some(-1));
        assert_eq!(eval("return bit.lshift(1, 31)").as_i64(), Some(i64::from(i32::MIN)));
        assert_eq!(eval("return bit.lshift(1, 33)").as_i64(), Some(2), "the count's low five bits");
        assert_eq!(eval("return bit.rshift(-1, 28)").as_i64(), Some(15));
        assert_eq!(eval("return bit.arshift(-256, 4)").as_i64(), Some(-16));
        assert_eq!(eval("return bit.rol(0x12345678, 8)").as_i64(), Some(0x34567812));
        assert_eq!(eval("return bit.ror(0x12345678, 8)").as_i64(), Some(0x78123456));
        assert_eq!(eval("return bit.bswap(0x12345678)").as_i64(), Some(0x78563412));
        assert_eq!(eval("return bit.tobit(1.5)").as_i64(), Some(2), "rounded half to even");
        assert_eq!(eval("return bit.tobit(2.5)").as_i64(), Some(2));
    }

    #[test]
    fn tohex_takes_a_width_and_case() {
        let lua = Lua::new();
        lua.globals().set("bit", table(&lua).unwrap()).unwrap();
        let s = |code: &str| lua.load(code).eval::<String>().unwrap();
        assert_eq!(s("return bit.tohex(255)"), "000000ff");
        assert_eq!(s("return bit.tohex(255, 2)"), "ff");
        assert_eq!(s("return bit.tohex(-1, -4)"), "FFFF");
        assert_eq!(s("return bit.tohex(0x12345678, 20)"), "12345678");
    }

    #[test]
    fn a_value_that_is_no_number_is_an_error() {
        let lua = Lua::new();
        lua.globals().set("bit", table(&lua).unwrap()).unwrap();
        let e = lua.load("return bit.band(1, {})").eval::<Value>().unwrap_err().to_string();
        assert!(e.contains("bad argument #2 to 'band' (number expected, got table)"), "{e}");
        assert_eq!(lua.load("return bit.band('7', 3)").eval::<i64>().unwrap(), 3);
    }
}
