//! Replies and their encoding in RESP2 or RESP3 (after `HELLO 3`): the commands build a
//! `Reply` without knowing the protocol; the connection's protocol picks the bytes.

use std::io::Write;

/// A reply to one command, independent of the protocol it is written in.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`.
    Simple(&'static str),
    /// A status line made at run time (a script's `{ok=...}`); one line, as `Simple`.
    Status(String),
    /// An error line; the text starts with its code (`ERR`, `WRONGTYPE`, ...).
    Error(String),
    /// An integer.
    Int(i64),
    /// A floating-point number (RESP3: a double; RESP2: a bulk string), printed as Redis
    /// prints one (`format_double`).
    Double(f64),
    /// A binary-safe string.
    Bulk(Vec<u8>),
    /// No value (RESP2: the null bulk string).
    Null,
    /// No array (RESP2: the null array, `*-1`; RESP3: null), where a command answers an
    /// array when it has one.
    NullArray,
    /// An ordered list.
    Array(Vec<Reply>),
    /// Pairs (RESP2: a flat array).
    Map(Vec<(Reply, Reply)>),
    /// Text meant for people (RESP3: a verbatim string; RESP2: a bulk string).
    Text(String),
    /// Out-of-band data, as pub/sub sends it (RESP3: a push frame; RESP2: an array).
    Push(Vec<Reply>),
    /// Several replies to one command, one frame each, in order (SUBSCRIBE answers once
    /// per channel).
    Frames(Vec<Reply>),
}

/// The protocol a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2, the default.
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

impl Protocol {
    /// The number `HELLO` reports.
    pub fn version(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

impl Reply {
    /// `+OK`.
    pub const OK: Reply = Reply::Simple("OK");

    /// An `ERR` error.
    pub fn err(msg: impl std::fmt::Display) -> Reply {
        Reply::Error(format!("ERR {msg}"))
    }

    /// A bulk string from text.
    pub fn text_bulk(s: impl Into<String>) -> Reply {
        Reply::Bulk(s.into().into_bytes())
    }

    /// Append this reply's bytes to `out`.
    pub fn encode(&self, proto: Protocol, out: &mut Vec<u8>) {
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(proto, out);
    }

    fn write_to(&self, proto: Protocol, out: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            Reply::Simple(s) => write!(out, "+{s}\r\n"),
            Reply::Status(s) => {
                let line: String = s.chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect();
                write!(out, "+{line}\r\n")
            }
            Reply::Error(e) => {
                // An error is one line: a newline inside would end it early.
                let line: String = e.chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect();
                write!(out, "-{line}\r\n")
            }
            Reply::Int(i) => write!(out, ":{i}\r\n"),
            Reply::Bulk(b) => {
                write!(out, "${}\r\n", b.len())?;
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
                Ok(())
            }
            Reply::Null => match proto {
                Protocol::Resp2 => write!(out, "$-1\r\n"),
                Protocol::Resp3 => write!(out, "_\r\n"),
            },
            Reply::NullArray => match proto {
                Protocol::Resp2 => write!(out, "*-1\r\n"),
                Protocol::Resp3 => write!(out, "_\r\n"),
            },
            Reply::Double(d) => match proto {
                Protocol::Resp2 => Reply::Bulk(format_double(*d).into_bytes()).write_to(proto, out),
                Protocol::Resp3 => write!(out, ",{}\r\n", format_double(*d)),
            },
            Reply::Array(items) => {
                // Several replies to one command inside an array (SUBSCRIBE between MULTI
                // and EXEC) are that many elements of it.
                let count: usize = items.iter().map(|r| if let Reply::Frames(f) = r { f.len() } else { 1 }).sum();
                write!(out, "*{count}\r\n")?;
                items.iter().try_for_each(|r| r.write_to(proto, out))
            }
            Reply::Map(pairs) => {
                match proto {
                    Protocol::Resp2 => write!(out, "*{}\r\n", pairs.len() * 2)?,
                    Protocol::Resp3 => write!(out, "%{}\r\n", pairs.len())?,
                }
                pairs.iter().try_for_each(|(k, v)| {
                    k.write_to(proto, out)?;
                    v.write_to(proto, out)
                })
            }
            Reply::Text(t) => match proto {
                Protocol::Resp2 => Reply::Bulk(t.clone().into_bytes()).write_to(proto, out),
                Protocol::Resp3 => write!(out, "={}\r\ntxt:{t}\r\n", t.len() + 4),
            },
            Reply::Push(items) => {
                match proto {
                    Protocol::Resp2 => write!(out, "*{}\r\n", items.len())?,
                    Protocol::Resp3 => write!(out, ">{}\r\n", items.len())?,
                }
                items.iter().try_for_each(|r| r.write_to(proto, out))
            }
            Reply::Frames(frames) => frames.iter().try_for_each(|r| r.write_to(proto, out)),
        }
    }
}

/// A double as Redis 7.0 prints one: `inf`/`-inf`, 0 as `0`, other numbers as C's
/// `%.17g` writes them (17 significant digits, trailing zeros dropped, exponent notation
/// below 1e-4 and from 1e17), so `0.1` is `0.10000000000000001`. (Redis 7.2 prints the
/// shortest text that reads back the same; the Redis this server is compared against is
/// 7.0.)
pub(crate) fn format_double(d: f64) -> String {
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if d == 0.0 {
        return "0".into();
    }
    format_g(d, 17)
}

/// C's `%.<precision>g` of a finite `d` (`precision` at least 1): the exponent X of the
/// `%.<precision - 1>e` form decides. -4 <= X < precision: fixed with precision - 1 - X
/// decimals; otherwise the `e` form. Trailing zeros (and a bare point) go.
pub(crate) fn format_g(d: f64, precision: usize) -> String {
    let p = precision.max(1);
    let sci = format!("{d:.*e}", p - 1);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if (-4..p as i32).contains(&x) {
        let decimals = usize::try_from(p as i32 - 1 - x).unwrap_or(0);
        return trim_zeros(&format!("{d:.decimals$}")).to_string();
    }
    let sign = if x < 0 { '-' } else { '+' };
    format!("{}e{sign}{:02}", trim_zeros(mantissa), x.unsigned_abs())
}

/// `digits` without the zeros ending its fraction, nor a point left bare.
fn trim_zeros(digits: &str) -> &str {
    if digits.contains('.') {
        digits.trim_end_matches('0').trim_end_matches('.')
    } else {
        digits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(r: &Reply) -> (String, String) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        r.encode(Protocol::Resp2, &mut a);
        r.encode(Protocol::Resp3, &mut b);
        (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap())
    }

    #[test]
    fn nulls_maps_and_text_differ_by_protocol() {
        assert_eq!(both(&Reply::Null), ("$-1\r\n".into(), "_\r\n".into()));
        let map = Reply::Map(vec![(Reply::text_bulk("a"), Reply::Int(1))]);
        assert_eq!(both(&map), ("*2\r\n$1\r\na\r\n:1\r\n".into(), "%1\r\n$1\r\na\r\n:1\r\n".into()));
        assert_eq!(both(&Reply::Text("hi".into())), ("$2\r\nhi\r\n".into(), "=6\r\ntxt:hi\r\n".into()));
    }

    #[test]
    fn pushes_are_arrays_in_resp2_and_frames_follow_each_other() {
        let push = Reply::Push(vec![Reply::text_bulk("message"), Reply::Int(1)]);
        assert_eq!(both(&push), ("*2\r\n$7\r\nmessage\r\n:1\r\n".into(), ">2\r\n$7\r\nmessage\r\n:1\r\n".into()));
        let frames = Reply::Frames(vec![Reply::Int(1), Reply::OK]);
        assert_eq!(both(&frames).0, ":1\r\n+OK\r\n");
        let nested = Reply::Array(vec![Reply::Int(0), frames]);
        assert_eq!(both(&nested).0, "*3\r\n:0\r\n:1\r\n+OK\r\n");
    }

    #[test]
    fn doubles_and_null_arrays_differ_by_protocol() {
        assert_eq!(both(&Reply::Double(1.5)), ("$3\r\n1.5\r\n".into(), ",1.5\r\n".into()));
        assert_eq!(both(&Reply::Double(f64::NEG_INFINITY)).1, ",-inf\r\n");
        assert_eq!(both(&Reply::NullArray), ("*-1\r\n".into(), "_\r\n".into()));
    }

    #[test]
    fn doubles_print_as_redis_prints_them() {
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(-2.0), "-2");
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(0.656_430_300_165_168_1), "0.65643030016516812");
        assert_eq!(format_double(1.0 / 3.0), "0.33333333333333331");
        assert_eq!(format_double(0.0001), "0.0001");
        assert_eq!(format_double(0.00001), "1.0000000000000001e-05");
        assert_eq!(format_double(1e16), "10000000000000000");
        assert_eq!(format_double(1e17), "1e+17");
        assert_eq!(format_double(-1e300), "-1.0000000000000001e+300");
        assert_eq!(format_double(-0.0), "0");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1.5e-7), "1.4999999999999999e-07");
        assert_eq!(format_double(123456789.0), "123456789");
    }

    #[test]
    fn errors_stay_on_one_line() {
        assert_eq!(both(&Reply::err("a\r\nb")).0, "-ERR a  b\r\n");
        assert_eq!(both(&Reply::Array(vec![Reply::OK, Reply::Int(-3)])).0, "*2\r\n+OK\r\n:-3\r\n");
    }
}
