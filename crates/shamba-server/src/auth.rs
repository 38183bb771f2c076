//! Who may run commands: the default user's password (`requirepass`), checked in constant
//! time, the commands a client may send before it authenticates, and protected mode (no
//! password and listening on every interface: only loopback clients are served).

use parking_lot::RwLock;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};

/// The server's password, if it has one, and protected mode; both may change while it
/// serves (CONFIG SET requirepass / protected-mode).
#[derive(Default)]
pub(crate) struct Auth {
    password: RwLock<Option<Vec<u8>>>,
    /// Protected mode is on (Redis's default).
    protected: AtomicBool,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the password.
        f.debug_struct("Auth").field("password", &self.required().then_some("<set>")).finish()
    }
}

/// Redis's reply to a command sent before AUTH when a password is set.
pub(crate) const NOAUTH: &str = "NOAUTH Authentication required.";

/// Redis's reply to a wrong password, or a user other than `default`.
pub(crate) const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Redis's reply to `AUTH password` when no password is set.
pub(crate) const NO_PASSWORD_SET: &str = "ERR AUTH <password> called without any password configured for the \
     default user. Are you sure your configuration is correct?";

/// Redis's reply to HELLO without AUTH before authenticating.
pub(crate) const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, \
     otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select \
     the RESP protocol version at the same time";

/// Redis's message to a client refused by protected mode (then the connection closes).
pub(crate) const DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled \
and no password is set for the default user. In this mode connections are only accepted from the loopback \
interface. If you want to connect from external computers to Redis you may adopt one of the following \
solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback \
interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not \
publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) \
Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting \
the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just \
for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the \
default user. NOTE: You only need to do one of the above things in order for the server to start accepting \
connections from the outside.\r\n";

impl Auth {
    /// A password (`None`: clients are authenticated from the start) and protected mode.
    pub(crate) fn new(password: Option<Vec<u8>>, protected: bool) -> Auth {
        Auth { password: RwLock::new(password.filter(|p| !p.is_empty())), protected: AtomicBool::new(protected) }
    }

    /// Whether clients must authenticate before most commands.
    pub(crate) fn required(&self) -> bool {
        self.password.read().is_some()
    }

    /// The password (CONFIG GET requirepass; empty when none).
    pub(crate) fn password(&self) -> Vec<u8> {
        self.password.read().clone().unwrap_or_default()
    }

    /// Set or clear (empty) the password: clients connected already keep their state,
    /// as in Redis.
    pub(crate) fn set_password(&self, password: &[u8]) {
        *self.password.write() = Some(password.to_vec()).filter(|p| !p.is_empty());
    }

    /// Whether protected mode is on.
    pub(crate) fn protected(&self) -> bool {
        self.protected.load(Ordering::Relaxed)
    }

    /// Turn protected mode on or off.
    pub(crate) fn set_protected(&self, on: bool) {
        self.protected.store(on, Ordering::Relaxed);
    }

    /// Whether `user` and `given` are the default user's credentials: any password when
    /// none is set (Redis's `nopass` default user), else the password, compared in a time
    /// that does not depend on where they differ.
    pub(crate) fn accepts(&self, user: &[u8], given: &[u8]) -> bool {
        if user != b"default" {
            return false;
        }
        match &*self.password.read() {
            None => true,
            Some(p) => same_bytes(p, given),
        }
    }

    /// Whether a client at `peer` is refused because the server listening on `local` is
    /// in protected mode: protected mode on, no password, the server bound to every
    /// interface and the client not on a loopback address.
    pub(crate) fn refuses(&self, local: &SocketAddr, peer: &SocketAddr) -> bool {
        self.protected() && !self.required() && local.ip().is_unspecified() && !is_loopback(peer.ip())
    }
}

/// Loopback, also as an IPv4-mapped IPv6 address.
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// `a == b` in a time that depends on their lengths only: every byte is compared, the
/// differences folded together, so a client timing replies learns nothing of where a
/// guess goes wrong.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let longest = a.len().max(b.len());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..longest {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= std::hint::black_box(x ^ y);
    }
    diff == 0
}

/// Whether the command `name` runs before the client authenticates.
pub(crate) fn runs_unauthenticated(name: &str) -> bool {
    matches!(name, "auth" | "hello" | "quit" | "reset")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_compare_whole() {
        assert!(same_bytes(b"abc\0def", b"abc\0def"));
        assert!(!same_bytes(b"abc\0def", b"abc"));
        assert!(!same_bytes(b"abc", b"abc\0"));
        assert!(!same_bytes(b"abd", b"abc"));
        assert!(same_bytes(b"", b""));
    }

    #[test]
    fn only_the_default_user_with_the_password_is_accepted() {
        let auth = Auth::new(Some(b"pw".to_vec()), true);
        assert!(auth.accepts(b"default", b"pw"));
        assert!(!auth.accepts(b"default", b"pW"));
        assert!(!auth.accepts(b"alice", b"pw"));
        let open = Auth::new(None, true);
        assert!(open.accepts(b"default", b"anything"));
        assert!(!open.accepts(b"alice", b"anything"));
    }

    #[test]
    fn protected_mode_refuses_remote_clients_of_an_open_server_on_every_interface() {
        let any: SocketAddr = "0.0.0.0:6380".parse().unwrap();
        let lo: SocketAddr = "127.0.0.1:6380".parse().unwrap();
        let remote: SocketAddr = "10.1.2.3:5000".parse().unwrap();
        let local_peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:5000".parse().unwrap();
        let open = Auth::new(None, true);
        assert!(open.refuses(&any, &remote));
        assert!(!open.refuses(&any, &local_peer));
        assert!(!open.refuses(&any, &mapped));
        assert!(!open.refuses(&lo, &remote), "bound to one interface: not protected");
        assert!(!Auth::new(None, false).refuses(&any, &remote), "protected mode off");
        assert!(!Auth::new(Some(b"pw".to_vec()), true).refuses(&any, &remote), "a password is set");
        open.set_password(b"now");
        assert!(!open.refuses(&any, &remote), "a password set while serving");
        assert!(open.accepts(b"default", b"now"));
        open.set_password(b"");
        open.set_protected(false);
        assert!(!open.refuses(&any, &remote), "protected mode turned off while serving");
    }
}
