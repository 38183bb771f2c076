//! Whether a client has sent bytes the server has not yet read: PUBLISH asks before it
//! counts a subscriber, so an UNSUBSCRIBE that reached the server before the PUBLISH is
//! served first, as on Redis's one thread (connections here run in parallel).
//!
//! The probe is a second descriptor of the client's socket (a `dup`, which shares the
//! socket's non-blocking mode with tokio's), peeked without reading. Dropped when the
//! connection ends, so it never keeps a closed connection's socket open.

use parking_lot::Mutex;
use std::io::ErrorKind;
use std::net::TcpStream;

/// A client's socket, for peeking.
#[derive(Debug, Default)]
pub(crate) struct InputProbe {
    socket: Mutex<Option<TcpStream>>,
}

impl InputProbe {
    /// A probe of `stream` (none when its descriptor cannot be duplicated).
    pub(crate) fn of(stream: &tokio::net::TcpStream) -> InputProbe {
        use std::os::fd::AsFd;
        let socket = stream.as_fd().try_clone_to_owned().ok().map(TcpStream::from);
        InputProbe { socket: Mutex::new(socket) }
    }

    /// Whether bytes wait in the socket, unread.
    pub(crate) fn pending(&self) -> bool {
        let mut byte = [0u8; 1];
        match self.socket.lock().as_ref().map(|s| s.peek(&mut byte)) {
            Some(Ok(n)) => n > 0,
            Some(Err(e)) if e.kind() == ErrorKind::WouldBlock => false,
            _ => false,
        }
    }

    /// The connection ended: the descriptor is closed.
    pub(crate) fn close(&self) {
        self.socket.lock().take();
    }
}

/// A connection's stream read while the client is marked as reading: from just before
/// each read of the socket, so no instant lies between bytes leaving the socket and the
/// mark (a probe in that instant would find neither); cleared when nothing was there.
pub(crate) struct MarkedRead<'a, S> {
    pub(crate) stream: &'a mut S,
    pub(crate) client: &'a crate::clients::Client,
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for MarkedRead<'_, S> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        this.client.set_reading(true);
        let polled = std::pin::Pin::new(&mut *this.stream).poll_read(cx, buf);
        if polled.is_pending() {
            this.client.set_reading(false);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn unread_bytes_are_seen_and_reading_them_clears_the_probe() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            use tokio::io::AsyncReadExt;
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            let probe = InputProbe::of(&server);
            assert!(!probe.pending(), "nothing sent, and the peek does not block");
            client.write_all(b"PING\r\n").unwrap();
            let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while !probe.pending() && std::time::Instant::now() < until {
                std::thread::yield_now();
            }
            assert!(probe.pending());
            let mut buf = [0u8; 6];
            server.read_exact(&mut buf).await.unwrap();
            assert!(!probe.pending());
            probe.close();
            assert!(!probe.pending());
        });
    }
}
