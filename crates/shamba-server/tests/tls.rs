//! TLS: a server with a certificate made at test time (signed by a CA also made here),
//! spoken to through tokio-rustls; the plain port beside it; and client certificates
//! required when a CA file is given.

use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use shamba_server::{Listener, ServerConfig, SyncMode, TlsConfig};
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

/// A CA, and certificates it signed: the server's (for `localhost`) and a client's.
struct Pki {
    ca_pem: String,
    server: (String, String),
    client: (String, String),
}

fn pki() -> Pki {
    let ca_key = KeyPair::generate().expect("key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let issue = |name: &str, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(vec![name.to_string()]).expect("params");
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &ca, &ca_key).expect("signed");
        (cert.pem(), key.serialize_pem())
    };
    Pki {
        ca_pem: ca.pem(),
        server: issue("localhost", ExtendedKeyUsagePurpose::ServerAuth),
        client: issue("a-client", ExtendedKeyUsagePurpose::ClientAuth),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

fn connector(pki: &Pki, with_client_cert: bool) -> TlsConnector {
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).expect("CA pem")).expect("root");
    let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots);
    let config = if with_client_cert {
        let chain = vec![CertificateDer::from_pem_slice(pki.client.0.as_bytes()).expect("cert")];
        let key = PrivateKeyDer::from_pem_slice(pki.client.1.as_bytes()).expect("key");
        builder.with_client_auth_cert(chain, key).expect("client cert")
    } else {
        builder.with_no_client_auth()
    };
    TlsConnector::from(Arc::new(config))
}

/// PING over TLS to `addr`: the reply, or the error that stopped it.
async fn ping(connector: &TlsConnector, addr: std::net::SocketAddr) -> std::io::Result<String> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("localhost").map_err(std::io::Error::other)?;
    let mut tls = connector.connect(name, tcp).await?;
    tls.write_all(b"PING\r\nECHO over-tls\r\n").await?;
    let mut got = vec![0; 7 + 14];
    tls.read_exact(&mut got).await?;
    Ok(String::from_utf8_lossy(&got).into_owned())
}

fn server(dir: &Path, pki: &Pki, client_ca: bool) -> (tokio::runtime::Runtime, Listener) {
    let cert = write(dir, "server.pem", &pki.server.0);
    let key = write(dir, "server.key", &pki.server.1);
    let mut config = ServerConfig::new(dir.join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    let mut tls = TlsConfig::new("127.0.0.1:0".parse().expect("address"), cert, key);
    if client_ca {
        tls.ca_cert_file = Some(write(dir, "ca.pem", &pki.ca_pem));
    }
    config.tls = Some(tls);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    (rt, listener)
}

#[test]
fn tls_clients_are_served_beside_plain_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = pki();
    let (rt, listener) = server(dir.path(), &pki, false);
    let (plain, tls) = (listener.local_addr(), listener.tls_addr().expect("a TLS port"));
    assert_ne!(plain, tls);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    rt.block_on(async {
        let reply = ping(&connector(&pki, false), tls).await.expect("TLS ping");
        assert_eq!(reply, "+PONG\r\n$8\r\nover-tls\r\n");
        // The plain port still speaks plain RESP.
        let mut c = TcpStream::connect(plain).await.expect("connect");
        c.write_all(b"PING\r\n").await.expect("send");
        let mut got = [0u8; 7];
        c.read_exact(&mut got).await.expect("reply");
        assert_eq!(&got, b"+PONG\r\n");
        // Plain bytes on the TLS port are no request.
        let mut raw = TcpStream::connect(tls).await.expect("connect");
        raw.write_all(b"PING\r\n").await.expect("send");
        let mut sink = Vec::new();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(15), raw.read_to_end(&mut sink)).await;
        assert!(!sink.starts_with(b"+PONG"), "answered plain text on the TLS port");
    });
    stop.send(()).expect("serving");
    rt.block_on(serving).expect("task").expect("clean stop");
}

#[test]
fn with_a_ca_file_clients_need_a_certificate_it_signed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = pki();
    let (rt, listener) = server(dir.path(), &pki, true);
    let tls = listener.tls_addr().expect("a TLS port");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    rt.block_on(async {
        assert!(ping(&connector(&pki, false), tls).await.is_err(), "no client certificate: refused");
        let reply = ping(&connector(&pki, true), tls).await.expect("with a client certificate");
        assert_eq!(reply, "+PONG\r\n$8\r\nover-tls\r\n");
    });
    stop.send(()).expect("serving");
    rt.block_on(serving).expect("task").expect("clean stop");
}

#[test]
fn unusable_tls_files_stop_the_server_from_starting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(dir.path().join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    let bad = write(dir.path(), "not.pem", "not a certificate");
    config.tls = Some(TlsConfig::new("127.0.0.1:0".parse().expect("address"), &bad, &bad));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let err = rt.block_on(Listener::bind(&config)).err().expect("refused");
    assert!(err.to_string().contains("not.pem"), "{err}");
}
