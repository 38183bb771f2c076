//! The connection layer's settings by Redis's names, from a config file (`name value` lines,
//! `#` comments, values quoted as Redis quotes them) or from `shamba serve`'s flags, which
//! are applied after the file's lines as Redis applies its command line: port, bind,
//! requirepass, protected-mode, maxclients, timeout, databases, tls-port, tls-cert-file,
//! tls-key-file, tls-ca-cert-file, tls-auth-clients, proto-max-bulk-len,
//! client-query-buffer-limit, notify-keyspace-events.

use crate::{ServerConfig, TlsConfig};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

/// Every setting's name.
const NAMES: &[&str] = &[
    "port",
    "bind",
    "requirepass",
    "protected-mode",
    "maxclients",
    "timeout",
    "databases",
    "tls-port",
    "tls-cert-file",
    "tls-key-file",
    "tls-ca-cert-file",
    "tls-auth-clients",
    "proto-max-bulk-len",
    "client-query-buffer-limit",
    "notify-keyspace-events",
];

/// Settings given so far; [`Settings::apply`] puts them in a [`ServerConfig`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Settings {
    port: Option<u16>,
    bind: Option<IpAddr>,
    requirepass: Option<Vec<u8>>,
    protected_mode: Option<bool>,
    maxclients: Option<usize>,
    timeout: Option<u64>,
    databases: Option<u16>,
    tls_port: Option<u16>,
    tls_cert_file: Option<PathBuf>,
    tls_key_file: Option<PathBuf>,
    tls_ca_cert_file: Option<PathBuf>,
    tls_auth_clients: Option<bool>,
    proto_max_bulk_len: Option<usize>,
    client_query_buffer_limit: Option<usize>,
    notify_keyspace_events: Option<u32>,
}

/// A setting that is unknown or has a bad value, or a file that cannot be read; where
/// it came from a file, the message names the file and the line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(String);

impl Settings {
    /// No settings: [`ServerConfig::new`]'s defaults stay.
    pub fn new() -> Settings {
        Settings::default()
    }

    /// Set `name` (Redis's name, any case) to `value`.
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] for a name not among the settings served, or a value that does
    /// not parse.
    pub fn set(&mut self, name: &str, value: &[u8]) -> Result<(), SettingsError> {
        let text = || String::from_utf8_lossy(value).into_owned();
        let bad = |what: &str| SettingsError(format!("{name}: {:?} is not {what}", text()));
        let number = |what: &str| text().trim().parse::<u64>().map_err(|_| bad(what));
        let yes_no = || match text().to_ascii_lowercase().as_str() {
            "yes" => Ok(true),
            "no" => Ok(false),
            _ => Err(bad("yes or no")),
        };
        let path = || Some(PathBuf::from(text()));
        match name.to_ascii_lowercase().as_str() {
            "port" => self.port = Some(u16::try_from(number("a port")?).map_err(|_| bad("a port"))?),
            "bind" => {
                // Redis takes several addresses, `-` marking optional ones; the first is served.
                let s = text();
                let first = s.split_whitespace().next().unwrap_or_default().trim_start_matches('-');
                let first = if first == "*" { "0.0.0.0" } else { first };
                self.bind = Some(first.parse().map_err(|_| bad("an IP address"))?);
            }
            "requirepass" => self.requirepass = Some(value.to_vec()).filter(|p| !p.is_empty()),
            "protected-mode" => self.protected_mode = Some(yes_no()?),
            "maxclients" => self.maxclients = Some(number("a number of clients")?.max(1) as usize),
            "timeout" => self.timeout = Some(number("a number of seconds")?),
            "databases" => {
                let n = u16::try_from(number("a number of databases")?).map_err(|_| bad("a number of databases"))?;
                self.databases = Some(n.max(1));
            }
            "tls-port" => self.tls_port = Some(u16::try_from(number("a port")?).map_err(|_| bad("a port"))?),
            "tls-cert-file" => self.tls_cert_file = path(),
            "tls-key-file" => self.tls_key_file = path(),
            "tls-ca-cert-file" => self.tls_ca_cert_file = path(),
            "tls-auth-clients" => self.tls_auth_clients = Some(yes_no()?),
            "proto-max-bulk-len" => self.proto_max_bulk_len = Some(memory(&text()).ok_or_else(|| bad("a size"))?),
            "client-query-buffer-limit" => {
                self.client_query_buffer_limit = Some(memory(&text()).ok_or_else(|| bad("a size"))?);
            }
            "notify-keyspace-events" => {
                self.notify_keyspace_events =
                    Some(crate::notify::parse(value).ok_or_else(|| bad("a set of event classes"))?);
            }
            _ => return Err(SettingsError(format!("unknown setting '{name}'"))),
        }
        Ok(())
    }

    /// Apply the `name value` lines of `text` (blank lines and `#` comments skipped);
    /// `origin` names where they came from in errors.
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] naming `origin` and the line number of the first bad line.
    pub fn read_text(&mut self, text: &[u8], origin: &str) -> Result<(), SettingsError> {
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let at = |e: String| SettingsError(format!("{origin}, line {}: {e}", i + 1));
            let words = split_line(line).map_err(|e| at(e.to_string()))?;
            let Some((name, values)) = words.split_first() else { continue };
            if name.starts_with(b"#") {
                continue;
            }
            let name = String::from_utf8_lossy(name).into_owned();
            if !NAMES.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(at(format!("unknown setting '{name}'")));
            }
            let value = match values {
                [v] => v.clone(),
                // `bind` takes several addresses.
                vs if name.eq_ignore_ascii_case("bind") && !vs.is_empty() => vs.join(&b' '),
                _ => return Err(at(format!("'{name}' takes one value"))),
            };
            self.set(&name, &value).map_err(|e| at(e.0))?;
        }
        Ok(())
    }

    /// Apply the lines of the config file at `path`.
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] when it cannot be read, or for its first bad line.
    pub fn read_file(&mut self, path: &Path) -> Result<(), SettingsError> {
        let text = std::fs::read(path).map_err(|e| SettingsError(format!("cannot read {}: {e}", path.display())))?;
        self.read_text(&text, &path.display().to_string())
    }

    /// Put the settings given into `config`.
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] when `tls-port` is given without `tls-cert-file` and
    /// `tls-key-file`, or `tls-auth-clients yes` without `tls-ca-cert-file`.
    pub fn apply(&self, config: &mut ServerConfig) -> Result<(), SettingsError> {
        if let Some(ip) = self.bind {
            config.bind.set_ip(ip);
        }
        if let Some(p) = self.port {
            config.bind.set_port(p);
        }
        if self.requirepass.is_some() {
            config.requirepass.clone_from(&self.requirepass);
        }
        if let Some(p) = self.protected_mode {
            config.protected_mode = p;
        }
        if let Some(m) = self.maxclients {
            config.maxclients = m;
        }
        if let Some(t) = self.timeout {
            config.timeout = t;
        }
        if let Some(d) = self.databases {
            config.databases = d;
        }
        if self.proto_max_bulk_len.is_some() {
            config.proto_max_bulk_len = self.proto_max_bulk_len;
        }
        if self.client_query_buffer_limit.is_some() {
            config.client_query_buffer_limit = self.client_query_buffer_limit;
        }
        if let Some(n) = self.notify_keyspace_events {
            config.notify_keyspace_events = n;
        }
        match self.tls_port {
            None | Some(0) => {}
            Some(port) => {
                let (Some(cert), Some(key)) = (&self.tls_cert_file, &self.tls_key_file) else {
                    return Err(SettingsError("tls-port needs tls-cert-file and tls-key-file".into()));
                };
                let mut tls = TlsConfig::new(SocketAddr::new(config.bind.ip(), port), cert, key);
                tls.ca_cert_file = match (self.tls_auth_clients, &self.tls_ca_cert_file) {
                    (Some(false), _) => None,
                    (Some(true), None) => {
                        return Err(SettingsError("tls-auth-clients yes needs tls-ca-cert-file".into()));
                    }
                    (_, ca) => ca.clone(),
                };
                config.tls = Some(tls);
            }
        }
        Ok(())
    }
}

/// A size as Redis writes them: bytes, or with k, kb, m, mb, g, gb (k = 1000, kb = 1024).
fn memory(s: &str) -> Option<usize> {
    let s = s.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: usize = digits.parse().ok()?;
    let mult: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A config line's words, as Redis splits them: spaces between words, `"..."` with
/// backslash escapes (`\n`, `\r`, `\t`, `\"`, `\\`, `\xHH`), `'...'` taken as is.
fn split_line(line: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    let mut words = Vec::new();
    let mut i = 0;
    let at = |i: usize| line.get(i).copied();
    loop {
        while at(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        let Some(first) = at(i) else { return Ok(words) };
        let mut word = Vec::new();
        match first {
            b'"' => {
                i += 1;
                loop {
                    match at(i) {
                        None => return Err("unbalanced quotes"),
                        Some(b'"') => break,
                        Some(b'\\') => {
                            let hex = |c: Option<u8>| c.and_then(|c| (c as char).to_digit(16));
                            match at(i + 1) {
                                Some(b'x') if hex(at(i + 2)).is_some() && hex(at(i + 3)).is_some() => {
                                    let v = hex(at(i + 2)).unwrap_or(0) * 16 + hex(at(i + 3)).unwrap_or(0);
                                    word.push(v as u8);
                                    // The two hex digits; the escape's two bytes below.
                                    i += 2;
                                }
                                Some(b'n') => word.push(b'\n'),
                                Some(b'r') => word.push(b'\r'),
                                Some(b't') => word.push(b'\t'),
                                Some(c) => word.push(c),
                                None => return Err("unbalanced quotes"),
                            }
                            i += 2;
                            continue;
                        }
                        Some(c) => word.push(c),
                    }
                    i += 1;
                }
                i += 1;
                if at(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                    return Err("closing quote must be followed by a space");
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    match at(i) {
                        None => return Err("unbalanced quotes"),
                        Some(b'\'') => break,
                        Some(c) => word.push(c),
                    }
                    i += 1;
                }
                i += 1;
                if at(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                    return Err("closing quote must be followed by a space");
                }
            }
            _ => {
                while let Some(c) = at(i).filter(|c| !c.is_ascii_whitespace()) {
                    word.push(c);
                    i += 1;
                }
            }
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_sets_what_it_names_and_flags_after_it_win() {
        let mut s = Settings::new();
        let file = b"# comment\n\nport 7000\nbind 0.0.0.0 -::1\nrequirepass \"se cret\\x00\"\nmaxclients 5\n\
            timeout 30\nprotected-mode no\ndatabases 4\nproto-max-bulk-len 1mb\nclient-query-buffer-limit 2mb\n";
        s.read_text(file, "test.conf").unwrap();
        s.set("port", b"7001").unwrap();
        let mut c = ServerConfig::new("/tmp/x");
        s.apply(&mut c).unwrap();
        assert_eq!(c.bind, "0.0.0.0:7001".parse().unwrap());
        assert_eq!(c.requirepass.as_deref(), Some(&b"se cret\0"[..]));
        assert_eq!((c.maxclients, c.timeout, c.protected_mode, c.databases), (5, 30, false, 4));
        assert_eq!((c.proto_max_bulk_len, c.client_query_buffer_limit), (Some(1 << 20), Some(2 << 20)));
        assert!(c.tls.is_none());
    }

    #[test]
    fn errors_name_the_line() {
        let e = Settings::new().read_text(b"port 1\nsave 900 1\n", "r.conf").unwrap_err().to_string();
        assert_eq!(e, "r.conf, line 2: unknown setting 'save'");
        let e = Settings::new().read_text(b"port 1 2\n", "r.conf").unwrap_err().to_string();
        assert_eq!(e, "r.conf, line 1: 'port' takes one value");
        let e = Settings::new().read_text(b"maxmemory 1gb\n", "r.conf").unwrap_err().to_string();
        assert_eq!(e, "r.conf, line 1: unknown setting 'maxmemory'");
        let e = Settings::new().read_text(b"timeout soon\n", "r.conf").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("timeout"), "{e}");
        assert!(Settings::new().read_text(b"requirepass \"open\n", "r.conf").is_err());
    }

    #[test]
    fn tls_needs_its_files() {
        let mut s = Settings::new();
        s.set("tls-port", b"7443").unwrap();
        assert!(s.apply(&mut ServerConfig::new("/tmp/x")).is_err());
        s.set("tls-cert-file", b"c.pem").unwrap();
        s.set("tls-key-file", b"k.pem").unwrap();
        s.set("tls-ca-cert-file", b"ca.pem").unwrap();
        let mut c = ServerConfig::new("/tmp/x");
        s.apply(&mut c).unwrap();
        let tls = c.tls.unwrap();
        assert_eq!(tls.bind, "127.0.0.1:7443".parse().unwrap());
        assert_eq!(tls.ca_cert_file, Some(PathBuf::from("ca.pem")));
    }

    #[test]
    fn sizes_read_as_redis_reads_them() {
        assert_eq!(memory("512mb"), Some(512 << 20));
        assert_eq!(memory("1k"), Some(1000));
        assert_eq!(memory("100"), Some(100));
        assert_eq!(memory("1tb"), None);
    }
}
