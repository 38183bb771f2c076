//! Reading requests: RESP arrays of bulk strings (what every client sends) and inline
//! commands (what a person types over telnet), with limits, so a malformed or oversized
//! frame is an error for its connection rather than unbounded memory.

#![deny(clippy::indexing_slicing)]

/// How big a request may get.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest bulk string (a key or a value).
    pub max_bulk: usize,
    /// Most elements in one request array.
    pub max_args: usize,
    /// Longest inline command line.
    pub max_inline: usize,
    /// Most bytes of one unfinished request held in memory (Redis's
    /// `client-query-buffer-limit`).
    pub max_query: usize,
}

impl Limits {
    /// Bulk strings up to the engine's largest key or value, capped at Redis's own 512 MB
    /// `proto-max-bulk-len`; Redis's 1M-element array bound, 64 KiB inline bound and 1 GiB
    /// query buffer.
    pub fn for_engine(max_key_size: usize, max_value_size: usize) -> Limits {
        Limits {
            max_bulk: max_key_size.max(max_value_size).min(512 << 20),
            max_args: 1 << 20,
            max_inline: 64 << 10,
            max_query: 1 << 30,
        }
    }
}

/// A request that cannot be read: the connection answers with this and closes. It
/// displays as the reason (`invalid bulk length`, ...).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtocolError(pub(super) String);

/// One request: the command name and its arguments.
pub(super) type Args = Vec<Vec<u8>>;

/// Parse one request from the front of `buf`: `Ok(Some((args, consumed)))`, `Ok(None)` when
/// `buf` holds only part of one, or the reason it is malformed. An empty inline line parses
/// as an empty `args` (to be skipped, as Redis does).
///
/// # Errors
///
/// A [`ProtocolError`] when the front of `buf` is not a request: a frame over `limits`, a
/// bad length, a missing CRLF, an element that is not a bulk string.
pub fn parse_request(buf: &[u8], limits: &Limits) -> Result<Option<(Args, usize)>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_array(buf, limits),
        Some(_) => parse_inline(buf, limits),
    }
}

fn parse_array(buf: &[u8], limits: &Limits) -> Result<Option<(Args, usize)>, ProtocolError> {
    let Some((count, mut pos)) = read_line_number(buf, 1, limits.max_inline, "invalid multibulk length")? else {
        return Ok(None);
    };
    if count > limits.max_args as i64 {
        return Err(ProtocolError("invalid multibulk length".into()));
    }
    if count <= 0 {
        return Ok(Some((Vec::new(), pos)));
    }
    let count = count as usize;
    // Reserve by what has arrived, not by what the header claims.
    let mut args = Vec::with_capacity(count.min(buf.len() / 4 + 1));
    for _ in 0..count {
        match buf.get(pos) {
            None => return Ok(None),
            Some(b'$') => {}
            Some(&c) => return Err(ProtocolError(format!("expected '$', got '{}'", c as char))),
        }
        let Some((len, after)) = read_line_number(buf, pos + 1, limits.max_inline, "invalid bulk length")? else {
            return Ok(None);
        };
        if len < 0 || len > limits.max_bulk as i64 {
            return Err(ProtocolError("invalid bulk length".into()));
        }
        let len = len as usize;
        let end = after + len;
        let Some(body) = buf.get(after..end) else {
            return Ok(None);
        };
        match buf.get(end..end + 2) {
            None if buf.len() < end + 2 => return Ok(None),
            Some(b"\r\n") => {}
            _ => return Err(ProtocolError("bulk string not followed by CRLF".into())),
        }
        args.push(body.to_vec());
        pos = end + 2;
    }
    Ok(Some((args, pos)))
}

/// The number on the line starting at `start` (after a type byte), and where the next
/// line starts; `invalid` is the error when it is not a number (Redis's words for each).
fn read_line_number(
    buf: &[u8],
    start: usize,
    max_line: usize,
    invalid: &str,
) -> Result<Option<(i64, usize)>, ProtocolError> {
    let rest = buf.get(start..).unwrap_or_default();
    let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
        if rest.len() > max_line {
            return Err(ProtocolError("too big count line".into()));
        }
        return Ok(None);
    };
    let line = rest.get(..nl).unwrap_or_default();
    let line = line.strip_suffix(b"\r").ok_or_else(|| ProtocolError("line not ended by CRLF".into()))?;
    let n = std::str::from_utf8(line)
        .ok()
        .filter(|s| !s.is_empty() && s.len() <= 20)
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| ProtocolError(invalid.into()))?;
    Ok(Some((n, start + nl + 1)))
}

fn parse_inline(buf: &[u8], limits: &Limits) -> Result<Option<(Args, usize)>, ProtocolError> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > limits.max_inline {
            return Err(ProtocolError("too big inline request".into()));
        }
        return Ok(None);
    };
    if nl > limits.max_inline {
        return Err(ProtocolError("too big inline request".into()));
    }
    let line = buf.get(..nl).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let args = split_inline(line).ok_or_else(|| ProtocolError("unbalanced quotes in request".into()))?;
    Ok(Some((args, nl + 1)))
}

fn hex(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).map(|d| d as u8)
}

/// An inline command's words, split as Redis splits them (`sdssplitargs`): whitespace
/// separates words; `"..."` holds spaces and the escapes `\xHH`, `\n`, `\r`, `\t`, `\b`,
/// `\a` and `\` before any other byte; `'...'` holds spaces and `\'`. A closing quote must
/// end its word. `None` when a quote is not closed, or is followed by more of its word.
fn split_inline(line: &[u8]) -> Option<Args> {
    #[derive(PartialEq)]
    enum Mode {
        Bare,
        Double,
        Single,
    }
    let mut args = Vec::new();
    let mut i = 0;
    let at = |i: usize| line.get(i).copied();
    loop {
        while at(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        if at(i).is_none() {
            return Some(args);
        }
        let mut word = Vec::new();
        let mut mode = Mode::Bare;
        loop {
            let c = at(i);
            match mode {
                Mode::Double => match c? {
                    b'\\'
                        if at(i + 1) == Some(b'x')
                            && at(i + 2).and_then(hex).is_some()
                            && at(i + 3).and_then(hex).is_some() =>
                    {
                        word.push(at(i + 2).and_then(hex)? * 16 + at(i + 3).and_then(hex)?);
                        i += 3;
                    }
                    b'\\' if at(i + 1).is_some() => {
                        i += 1;
                        word.push(match at(i)? {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                    }
                    b'"' => {
                        if at(i + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    other => word.push(other),
                },
                Mode::Single => match c? {
                    b'\\' if at(i + 1) == Some(b'\'') => {
                        word.push(b'\'');
                        i += 1;
                    }
                    b'\'' => {
                        if at(i + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    other => word.push(other),
                },
                Mode::Bare => match c {
                    None => break,
                    Some(b) if b.is_ascii_whitespace() => break,
                    Some(b'"') => mode = Mode::Double,
                    Some(b'\'') => mode = Mode::Single,
                    Some(other) => word.push(other),
                },
            }
            i += 1;
        }
        args.push(word);
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { max_bulk: 16, max_args: 4, max_inline: 32, max_query: 64 };

    fn args(v: &[&str]) -> Args {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn parses_an_array_and_reports_what_it_consumed() {
        let buf = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n";
        let (a, n) = parse_request(buf, &LIMITS).unwrap().unwrap();
        assert_eq!(a, args(&["GET", "k"]));
        let (b, m) = parse_request(&buf[n..], &LIMITS).unwrap().unwrap();
        assert_eq!(b, args(&["PING"]));
        assert_eq!(n + m, buf.len());
    }

    #[test]
    fn every_prefix_of_a_request_asks_for_more() {
        let buf = b"*2\r\n$3\r\nSET\r\n$5\r\nhe\r\no\r\n";
        for cut in 0..buf.len() {
            assert_eq!(parse_request(&buf[..cut], &LIMITS).unwrap(), None, "cut at {cut}");
        }
        assert_eq!(parse_request(buf, &LIMITS).unwrap().unwrap().0, args(&["SET", "he\r\no"]));
    }

    #[test]
    fn oversized_and_malformed_frames_are_errors() {
        assert!(parse_request(b"*5\r\n", &LIMITS).is_err());
        assert!(parse_request(b"*1\r\n$17\r\n", &LIMITS).is_err());
        assert!(parse_request(b"*1\r\n$-1\r\n", &LIMITS).is_err());
        assert!(parse_request(b"*1\r\n:1\r\n", &LIMITS).is_err());
        assert_eq!(parse_request(b"*x\r\n", &LIMITS).unwrap_err().to_string(), "invalid multibulk length");
        assert_eq!(
            parse_request(b"*2\r\n$1\r\nx\r\n$blabla\r\n", &LIMITS).unwrap_err().to_string(),
            "invalid bulk length"
        );
        assert!(parse_request(b"*1\r\n$1\r\nab\r\n", &LIMITS).is_err());
        assert!(parse_request(&[b'a'; 40], &LIMITS).is_err());
        assert!(parse_request(&[b'*'; 40], &LIMITS).is_err());
    }

    #[test]
    fn inline_commands_split_on_whitespace() {
        let (a, n) = parse_request(b"SET  k v\r\nrest", &LIMITS).unwrap().unwrap();
        assert_eq!((a, n), (args(&["SET", "k", "v"]), 10));
        assert_eq!(parse_request(b"\r\n", &LIMITS).unwrap().unwrap(), (Vec::new(), 2));
        assert_eq!(parse_request(b"PING", &LIMITS).unwrap(), None);
    }

    #[test]
    fn inline_commands_take_quotes_and_escapes_as_redis_does() {
        let split = |l: &[u8]| split_inline(l);
        assert_eq!(split(br#"SET "a b" 'c d'"#), Some(args(&["SET", "a b", "c d"])));
        assert_eq!(split(br#"SET k "\x41\n\t\"q\\""#), Some(args(&["SET", "k", "A\n\t\"q\\"])));
        assert_eq!(split(br#"SET k "\xZZ""#), Some(args(&["SET", "k", "xZZ"])));
        assert_eq!(split(br#"SET k 'it\'s'"#), Some(args(&["SET", "k", "it's"])));
        assert_eq!(split(br#"SET k """#), Some(args(&["SET", "k", ""])));
        assert_eq!(split(br#"a"b c" d"#), Some(args(&["ab c", "d"])));
        assert_eq!(split(br#"SET k "open"#), None);
        assert_eq!(split(br#"SET k 'open"#), None);
        assert_eq!(split(br#"SET k "a"b"#), None);
        let err = parse_request(b"SET \"k\r\n", &LIMITS).unwrap_err();
        assert_eq!(err.to_string(), "unbalanced quotes in request");
        assert_eq!(parse_request(b"ECHO \"a b\"\r\nrest", &LIMITS).unwrap().unwrap(), (args(&["ECHO", "a b"]), 12));
    }
}
