//! Whether a client has sent bytes the server has not yet read: PUBLISH asks before it
//! counts a subscriber, so an UNSUBSCRIBE that reached the server before the PUBLISH is
//! served first, as on Redis's one thread (connections here run in parallel).
//!
//! The probe is a second descriptor of the client's socket (a `dup`, which shares the
//! socket's non-blocking mode with tokio's), peeked without reading. PUBLISH asks only
//! subscribers, so only a subscribed connection holds one: it is made when the client
//! subscribes and closed when it has unsubscribed from everything or the connection ends
//! (a plain client thus costs one descriptor, and a probe never keeps a closed
//! connection's socket open).

use parking_lot::Mutex;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, BorrowedFd};

/// A client's socket, for peeking, while it is subscribed.
#[derive(Debug, Default)]
pub(crate) struct InputProbe {
    socket: Mutex<Option<TcpStream>>,
}

impl InputProbe {
    /// Hold a descriptor of `stream`'s socket while `wanted` (the client is subscribed),
    /// none otherwise. Called by the connection that owns `stream`, after each batch of
    /// its requests ran and before their replies are written, so a subscriber is probed
    /// from before it can send anything after its SUBSCRIBE's reply. When the descriptor
    /// cannot be duplicated (none left), the probe stays empty: PUBLISH then counts the
    /// subscriber without asking, as it did before probes existed.
    pub(crate) fn follow<S: AsRawFd>(&self, stream: &S, wanted: bool) {
        let mut socket = self.socket.lock();
        if !wanted {
            socket.take();
            return;
        }
        if socket.is_some() {
            return;
        }
        // SAFETY: `stream` is borrowed for this whole call, so the descriptor it names is
        // open and stays open until `try_clone_to_owned` has made an independent one
        // (exercised by `input_probe::tests::unread_bytes_are_seen_and_reading_them_clears_the_probe`
        // and the races test of PUBLISH after UNSUBSCRIBE).
        let borrowed = unsafe { BorrowedFd::borrow_raw(stream.as_raw_fd()) };
        *socket = borrowed.try_clone_to_owned().ok().map(TcpStream::from);
    }

    /// Whether it holds a descriptor.
    #[cfg(test)]
    fn is_held(&self) -> bool {
        self.socket.lock().is_some()
    }

    /// Whether bytes wait in the socket, unread (never, while no descriptor is held).
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
            let probe = InputProbe::default();
            client.write_all(b"X").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!probe.pending(), "not following the socket: nothing is seen");
            let mut x = [0u8; 1];
            server.read_exact(&mut x).await.unwrap();
            probe.follow(&server, true);
            assert!(probe.is_held());
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
            client.write_all(b"PING\r\n").unwrap();
            probe.follow(&server, false);
            assert!(!probe.is_held(), "dropped when no longer wanted");
            assert!(!probe.pending());
            probe.follow(&server, true);
            probe.close();
            assert!(!probe.is_held());
            assert!(!probe.pending());
        });
    }
}
