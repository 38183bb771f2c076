//! BITFIELD and BITFIELD_RO: signed and unsigned integers of 1 to 64 bits (unsigned up to
//! 63, as Redis) at any bit offset of a string value, read, set or incremented in one
//! command, with Redis's overflow policies (WRAP, SAT, FAIL).

use super::strings2::{put_keeping_deadline, MAX_STRING};
use super::{arg, engine_error, is, parse_int, selected, syntax_error, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "bitfield", arity: -2, flags: &["write", "denyoom"], keys: (1, 1, 1), group: "bitmap", summary: "GET, SET, INCRBY integers of 1-64 bits at bit offsets (OVERFLOW WRAP|SAT|FAIL)", run: bitfield },
    Spec { name: "bitfield_ro", arity: -2, flags: &["readonly", "fast"], keys: (1, 1, 1), group: "bitmap", summary: "BITFIELD's GET only", run: bitfield_ro },
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// An integer type: its width and sign.
#[derive(Clone, Copy, Debug)]
struct Field {
    signed: bool,
    bits: u32,
}

#[derive(Debug)]
enum Op {
    Get(Field, u64),
    Set(Field, u64, i64, Overflow),
    Incr(Field, u64, i64, Overflow),
}

fn parse_field(w: &[u8]) -> Result<Field, Reply> {
    let bad =
        || Reply::err("Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    let (signed, digits) = match w.split_first() {
        Some((b'i' | b'I', d)) => (true, d),
        Some((b'u' | b'U', d)) => (false, d),
        _ => return Err(bad()),
    };
    let bits = parse_int(digits).ok_or_else(bad)?;
    let max = if signed { 64 } else { 63 };
    if !(1..=max).contains(&bits) {
        return Err(bad());
    }
    Ok(Field { signed, bits: bits as u32 })
}

/// A bit offset, or `#n`: n times the field's width.
fn parse_offset(w: &[u8], field: Field) -> Result<u64, Reply> {
    let bad = || Reply::err("bit offset is not an integer or out of range");
    let (n, scale) = match w.strip_prefix(b"#") {
        Some(rest) => (parse_int(rest).ok_or_else(bad)?, u64::from(field.bits)),
        None => (parse_int(w).ok_or_else(bad)?, 1),
    };
    let off = u64::try_from(n).ok().and_then(|n| n.checked_mul(scale)).ok_or_else(bad)?;
    if off + u64::from(field.bits) > (MAX_STRING as u64) * 8 {
        return Err(bad());
    }
    Ok(off)
}

fn parse_ops(words: &Args, read_only: bool) -> Result<Vec<Op>, Reply> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let left = words.len() - i - 1;
        if is(w, "GET") && left >= 2 {
            let field = parse_field(arg(words, i + 1))?;
            ops.push(Op::Get(field, parse_offset(arg(words, i + 2), field)?));
            i += 3;
        } else if (is(w, "SET") || is(w, "INCRBY")) && left >= 3 {
            if read_only {
                return Err(Reply::err("BITFIELD_RO only supports the GET subcommand"));
            }
            let field = parse_field(arg(words, i + 1))?;
            let off = parse_offset(arg(words, i + 2), field)?;
            let n = parse_int(arg(words, i + 3)).ok_or_else(super::not_an_integer)?;
            ops.push(if is(w, "SET") { Op::Set(field, off, n, overflow) } else { Op::Incr(field, off, n, overflow) });
            i += 4;
        } else if is(w, "OVERFLOW") && left >= 1 {
            if read_only {
                return Err(Reply::err("BITFIELD_RO only supports the GET subcommand"));
            }
            let p = arg(words, i + 1);
            overflow = if is(p, "WRAP") {
                Overflow::Wrap
            } else if is(p, "SAT") {
                Overflow::Sat
            } else if is(p, "FAIL") {
                Overflow::Fail
            } else {
                return Err(Reply::err("Invalid OVERFLOW type specified"));
            };
            i += 2;
        } else {
            return Err(syntax_error());
        }
    }
    Ok(ops)
}

/// The `bits` bits at `off` of `v` (past its end: zeros), most significant first.
fn read_bits(v: &[u8], off: u64, bits: u32) -> u64 {
    (0..u64::from(bits)).fold(0u64, |acc, i| {
        let at = off + i;
        let bit = v.get((at / 8) as usize).is_some_and(|b| b & (0x80 >> (at % 8)) != 0);
        (acc << 1) | u64::from(bit)
    })
}

/// Write the low `bits` bits of `value` at `off` of `v`, growing it with zeros.
fn write_bits(v: &mut Vec<u8>, off: u64, bits: u32, value: u64) {
    let end = ((off + u64::from(bits)).div_ceil(8)) as usize;
    if v.len() < end {
        v.resize(end, 0);
    }
    for i in 0..u64::from(bits) {
        let at = off + i;
        let on = (value >> (u64::from(bits) - 1 - i)) & 1 == 1;
        if let Some(b) = v.get_mut((at / 8) as usize) {
            let mask = 0x80u8 >> (at % 8);
            *b = if on { *b | mask } else { *b & !mask };
        }
    }
}

impl Field {
    /// The field's bits as its integer.
    fn decode(self, raw: u64) -> i128 {
        if self.signed && self.bits < 64 && raw >> (self.bits - 1) & 1 == 1 {
            i128::from(raw) - (1i128 << self.bits)
        } else if self.signed && self.bits == 64 {
            i128::from(raw as i64)
        } else {
            i128::from(raw)
        }
    }

    fn range(self) -> (i128, i128) {
        if self.signed {
            (-(1i128 << (self.bits - 1)), (1i128 << (self.bits - 1)) - 1)
        } else {
            (0, (1i128 << self.bits) - 1)
        }
    }

    /// `n` fitted into the field by `policy`: `None` when it does not fit and the policy is
    /// FAIL.
    fn fit(self, n: i128, policy: Overflow) -> Option<i128> {
        let (min, max) = self.range();
        if (min..=max).contains(&n) {
            return Some(n);
        }
        match policy {
            Overflow::Fail => None,
            Overflow::Sat => Some(n.clamp(min, max)),
            Overflow::Wrap => Some(self.decode((n.rem_euclid(1i128 << self.bits)) as u64)),
        }
    }

    /// The field's bits of `n` (two's complement for a negative one).
    fn encode(self, n: i128) -> u64 {
        (n.rem_euclid(1i128 << self.bits)) as u64
    }
}

fn run(ctx: &mut Ctx<'_>, args: &Args, read_only: bool) -> Reply {
    let ops = match parse_ops(args.get(2..).unwrap_or_default(), read_only) {
        Ok(ops) => ops,
        Err(r) => return r,
    };
    let key = arg(args, 1);
    let db = selected!(ctx);
    let writes = ops.iter().any(|o| !matches!(o, Op::Get(..)));
    let _lock = db.lock(if writes { vec![key] } else { Vec::new() });
    let (mut value, existed) = match db.get(key) {
        Ok(v) => (v.clone().unwrap_or_default(), v.is_some()),
        Err(e) => return engine_error(e),
    };
    let mut replies = Vec::with_capacity(ops.len());
    let mut changed = false;
    for op in ops {
        let reply = match op {
            Op::Get(f, off) => Reply::Int(f.decode(read_bits(&value, off, f.bits)) as i64),
            Op::Set(f, off, n, policy) => {
                let old = f.decode(read_bits(&value, off, f.bits));
                match f.fit(i128::from(n), policy) {
                    Some(new) => {
                        write_bits(&mut value, off, f.bits, f.encode(new));
                        changed = true;
                        Reply::Int(old as i64)
                    }
                    None => Reply::Null,
                }
            }
            Op::Incr(f, off, by, policy) => {
                let old = f.decode(read_bits(&value, off, f.bits));
                match f.fit(old + i128::from(by), policy) {
                    Some(new) => {
                        write_bits(&mut value, off, f.bits, f.encode(new));
                        changed = true;
                        Reply::Int(new as i64)
                    }
                    None => Reply::Null,
                }
            }
        };
        replies.push(reply);
    }
    if changed || (writes && !existed && !value.is_empty()) {
        if let Err(r) = put_keeping_deadline(&db, key, &value) {
            return r;
        }
    }
    Reply::Array(replies)
}

fn bitfield(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    run(ctx, args, false)
}

fn bitfield_ro(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    run(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_write_and_overflow_as_redis() {
        let mut v = Vec::new();
        write_bits(&mut v, 0, 8, 100);
        assert_eq!(v, [100]);
        write_bits(&mut v, 4, 8, 0xff);
        assert_eq!(v, [0x6f, 0xf0]);
        assert_eq!(read_bits(&v, 4, 8), 0xff);
        let i8f = Field { signed: true, bits: 8 };
        let u2 = Field { signed: false, bits: 2 };
        assert_eq!(i8f.decode(0xff), -1);
        assert_eq!(i8f.fit(128, Overflow::Wrap), Some(-128));
        assert_eq!(i8f.fit(200, Overflow::Sat), Some(127));
        assert_eq!(i8f.fit(-129, Overflow::Fail), None);
        assert_eq!(u2.fit(5, Overflow::Wrap), Some(1));
        assert_eq!(u2.fit(-1, Overflow::Sat), Some(0));
        assert_eq!(i8f.encode(-1), 0xff);
        let i64f = Field { signed: true, bits: 64 };
        assert_eq!(i64f.fit(i128::from(i64::MAX) + 1, Overflow::Wrap), Some(i128::from(i64::MIN)));
        assert_eq!(parse_offset(b"#2", u2).ok(), Some(4));
        assert!(parse_field(b"u64").is_err() && parse_field(b"i64").is_ok() && parse_field(b"x8").is_err());
    }
}
