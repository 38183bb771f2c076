//! A script's first line `#!lua [flags=f1,f2,...]` (Redis 7): the engine and the flags the
//! script declares. A script with that line runs by its flags: without `no-writes` it may
//! write and EVAL_RO refuses it; without `allow-oom` (or `no-writes`) it does not start
//! while the memory is over `maxmemory`, and with `allow-oom` its writes pass that limit.
//! A script without the line runs as before Redis 7: its write commands are judged one by
//! one. The line is compiled as a comment, so the script's line numbers stay as written.

use crate::reply::Reply;
use std::borrow::Cow;

/// What a shebang line declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Flags {
    pub(super) no_writes: bool,
    pub(super) allow_oom: bool,
}

/// The flags Redis knows; the others than `no-writes` and `allow-oom` change nothing on
/// a server without replicas and whose cluster mode runs no scripts.
const KNOWN: &[&str] = &["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"];

/// `None` for a script without a shebang line; its flags, or the error Redis answers.
pub(super) fn parse(body: &[u8]) -> Result<Option<Flags>, Reply> {
    let Some(rest) = body.strip_prefix(b"#!") else {
        return Ok(None);
    };
    let line = rest.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let engine = words.next().unwrap_or_default();
    if engine != "lua" {
        return Err(Reply::err(format!("Unexpected engine in script shebang: {engine}")));
    }
    let mut flags = Flags::default();
    for word in words {
        let Some(list) = word.strip_prefix("flags=") else {
            return Err(Reply::err(format!("Unknown lua shebang option: {word}")));
        };
        for flag in list.split(',').filter(|f| !f.is_empty()) {
            if !KNOWN.contains(&flag) {
                return Err(Reply::err(format!("Unexpected flag in script shebang: {flag}")));
            }
            flags.no_writes |= flag == "no-writes";
            flags.allow_oom |= flag == "allow-oom";
        }
    }
    Ok(Some(flags))
}

/// The text Lua compiles: a shebang line turned into a comment of the same length.
pub(super) fn source(body: &[u8]) -> Cow<'_, [u8]> {
    match body.strip_prefix(b"#!") {
        Some(rest) => Cow::Owned([b"--".as_slice(), rest].concat()),
        None => Cow::Borrowed(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(body: &str) -> String {
        match parse(body.as_bytes()) {
            Err(Reply::Error(e)) => e,
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn the_line_gives_the_engine_and_the_flags() {
        assert_eq!(parse(b"return 1"), Ok(None));
        assert_eq!(parse(b"#!lua\nreturn 1"), Ok(Some(Flags::default())));
        assert_eq!(parse(b"#!lua flags=\nreturn 1"), Ok(Some(Flags::default())));
        let both = Flags { no_writes: true, allow_oom: true };
        assert_eq!(parse(b"#!lua flags=no-writes,allow-stale,allow-oom\nreturn 1"), Ok(Some(both)));
        assert!(error("#!not-lua\nreturn 1").contains("Unexpected engine in script shebang"));
        assert!(error("#!lua badger=data\nreturn 1").contains("Unknown lua shebang option"));
        assert!(error("#!lua flags=allow-oom,what?\nreturn 1").contains("Unexpected flag in script shebang"));
    }

    #[test]
    fn the_line_compiles_as_a_comment_of_its_length() {
        assert_eq!(&*source(b"#!lua flags=no-writes\nreturn 1"), b"--lua flags=no-writes\nreturn 1");
        assert_eq!(&*source(b"return 1"), b"return 1");
    }
}
