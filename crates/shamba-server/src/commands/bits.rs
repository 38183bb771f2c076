//! Bit commands on string values: SETBIT, GETBIT, BITCOUNT and BITPOS (BYTE or BIT
//! ranges), BITOP. Bit 0 is the most significant bit of the first byte, as in Redis; a
//! SETBIT past the end grows the value with zero bytes and keeps its deadline.

use super::strings2::{clamp_range, put_keeping_deadline, too_long, MAX_STRING};
use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "setbit", arity: 4, flags: &["write", "denyoom"], keys: (1, 1, 1), group: "bitmap", summary: "Set or clear one bit, reply the old bit", run: setbit },
    Spec { name: "getbit", arity: 3, flags: &["readonly", "fast"], keys: (1, 1, 1), group: "bitmap", summary: "One bit of a value", run: getbit },
    Spec { name: "bitcount", arity: -2, flags: &["readonly"], keys: (1, 1, 1), group: "bitmap", summary: "Count the set bits (in a BYTE or BIT range)", run: bitcount },
    Spec { name: "bitpos", arity: -3, flags: &["readonly"], keys: (1, 1, 1), group: "bitmap", summary: "First bit set or clear (in a BYTE or BIT range)", run: bitpos },
    Spec { name: "bitop", arity: -4, flags: &["write", "denyoom"], keys: (2, -1, 1), group: "bitmap", summary: "AND, OR, XOR or NOT of values into a key", run: bitop },
];

fn bit_offset(word: &[u8]) -> Result<u64, Reply> {
    parse_int(word)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n < (MAX_STRING as u64) * 8)
        .ok_or_else(|| Reply::err("bit offset is not an integer or out of range"))
}

fn bit_at(v: &[u8], i: u64) -> bool {
    v.get((i / 8) as usize).is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
}

fn setbit(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let offset = match bit_offset(arg(args, 2)) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let on = match arg(args, 3) {
        b"1" => true,
        b"0" => false,
        _ => return Reply::err("bit is not an integer or out of range"),
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let mut value = match db.get(key) {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return engine_error(e),
    };
    let byte = (offset / 8) as usize;
    if value.len() <= byte {
        value.resize(byte + 1, 0);
    }
    let old = bit_at(&value, offset);
    if let Some(b) = value.get_mut(byte) {
        let mask = 0x80u8 >> (offset % 8);
        *b = if on { *b | mask } else { *b & !mask };
    }
    match put_keeping_deadline(&db, key, &value) {
        Ok(()) => Reply::Int(i64::from(old)),
        Err(r) => r,
    }
}

fn getbit(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let offset = match bit_offset(arg(args, 2)) {
        Ok(o) => o,
        Err(r) => return r,
    };
    match selected!(ctx).get(arg(args, 1)) {
        Ok(v) => Reply::Int(i64::from(bit_at(&v.unwrap_or_default(), offset))),
        Err(e) => engine_error(e),
    }
}

/// A range argument pair and its unit: the bits `first..=last` of `v` it selects (`None`:
/// empty), and whether an end was given.
fn bit_range(v: &[u8], words: &Args) -> Result<(Option<(u64, u64)>, bool), Reply> {
    let all = |v: &[u8]| (!v.is_empty()).then(|| (0, v.len() as u64 * 8 - 1));
    let (start, end, bits) = match words {
        [] => return Ok((all(v), false)),
        [s] => (parse_int(s).ok_or_else(not_an_integer)?, -1, false),
        [s, e] => (parse_int(s).ok_or_else(not_an_integer)?, parse_int(e).ok_or_else(not_an_integer)?, false),
        [s, e, unit] if is(unit, "BYTE") || is(unit, "BIT") => {
            (parse_int(s).ok_or_else(not_an_integer)?, parse_int(e).ok_or_else(not_an_integer)?, is(unit, "BIT"))
        }
        _ => return Err(syntax_error()),
    };
    let end_given = words.len() >= 2;
    let range = if bits {
        clamp_range(start, end, v.len() * 8).map(|(s, e)| (s as u64, e as u64))
    } else {
        clamp_range(start, end, v.len()).map(|(s, e)| (s as u64 * 8, e as u64 * 8 + 7))
    };
    Ok((range, end_given))
}

fn count_bits(v: &[u8], first: u64, last: u64) -> u64 {
    let mut n = 0;
    let mut i = first;
    while i <= last {
        if i.is_multiple_of(8) && i + 7 <= last {
            n += u64::from(v.get((i / 8) as usize).map_or(0, |b| b.count_ones()));
            i += 8;
        } else {
            n += u64::from(bit_at(v, i));
            i += 1;
        }
    }
    n
}

fn bitcount(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let words = args.get(2..).unwrap_or_default();
    if words.len() == 1 || words.len() > 3 {
        return syntax_error();
    }
    let value = match selected!(ctx).get(arg(args, 1)) {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return engine_error(e),
    };
    match bit_range(&value, words) {
        Ok((Some((first, last)), _)) => Reply::Int(count_bits(&value, first, last) as i64),
        Ok((None, _)) => Reply::Int(0),
        Err(r) => r,
    }
}

fn bitpos(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let want = match arg(args, 2) {
        b"1" => true,
        b"0" => false,
        w if parse_int(w).is_some() => return Reply::err("The bit argument must be 1 or 0."),
        _ => return not_an_integer(),
    };
    let words = args.get(3..).unwrap_or_default();
    if words.len() > 3 {
        return syntax_error();
    }
    let value = match selected!(ctx).get(arg(args, 1)) {
        Ok(Some(v)) => v,
        Ok(None) => return Reply::Int(if want { -1 } else { 0 }),
        Err(e) => return engine_error(e),
    };
    let (range, end_given) = match bit_range(&value, words) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let Some((first, last)) = range else {
        return Reply::Int(-1);
    };
    let skip = if want { 0u8 } else { 0xff };
    let mut i = first;
    while i <= last {
        // Whole bytes that cannot hold the bit are skipped at once.
        if i.is_multiple_of(8) && i + 7 <= last && value.get((i / 8) as usize) == Some(&skip) {
            i += 8;
            continue;
        }
        if bit_at(&value, i) == want {
            return Reply::Int(i as i64);
        }
        i += 1;
    }
    // Looking for a clear bit with no end given: the value reads as followed by zeros.
    if !want && !end_given {
        return Reply::Int(last as i64 + 1);
    }
    Reply::Int(-1)
}

fn bitop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let op = arg(args, 1);
    let Some(op) = ["AND", "OR", "XOR", "NOT"].into_iter().find(|o| is(op, o)) else {
        return syntax_error();
    };
    let (dest, sources) = (arg(args, 2), args.get(3..).unwrap_or_default());
    if op == "NOT" && sources.len() != 1 {
        return Reply::err("BITOP NOT must be called with a single source key.");
    }
    let db = selected!(ctx);
    let _lock = db.lock([dest]);
    let values: Vec<Vec<u8>> = match db.get_many(sources.iter().map(Vec::as_slice)) {
        Ok(v) => v.into_iter().map(Option::unwrap_or_default).collect(),
        Err(e) => return engine_error(e),
    };
    let len = values.iter().map(Vec::len).max().unwrap_or(0);
    if len as i64 > MAX_STRING {
        return too_long();
    }
    let mut out = vec![0u8; len];
    for (i, byte) in out.iter_mut().enumerate() {
        let mut bytes = values.iter().map(|v| v.get(i).copied().unwrap_or(0));
        let first = bytes.next().unwrap_or(0);
        *byte = match op {
            "AND" => bytes.fold(first, |a, b| a & b),
            "OR" => bytes.fold(first, |a, b| a | b),
            "XOR" => bytes.fold(first, |a, b| a ^ b),
            _ => !first,
        };
    }
    let mut b = db.batch();
    if out.is_empty() {
        b.delete(&db, dest);
    } else {
        b.put(&db, dest, &out);
    }
    db.write(b).map_or_else(engine_error, |()| Reply::Int(len as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_count_in_byte_and_bit_ranges() {
        let v = b"foobar";
        assert_eq!(count_bits(v, 0, 47), 26);
        assert_eq!(count_bits(v, 8, 15), 6);
        assert_eq!(count_bits(v, 5, 30), 17);
        assert!(bit_at(&[0x80], 0) && !bit_at(&[0x80], 1) && !bit_at(&[], 3));
    }
}
