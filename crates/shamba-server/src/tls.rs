//! TLS through rustls (its `ring` provider): the server's certificate chain and key from PEM
//! files, and, when a CA file is given, client certificates required and checked against
//! it (Redis's `tls-auth-clients yes`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls::crypto::{ring, CryptoProvider};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// Where a server listens for TLS clients and the files it proves itself with.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TlsConfig {
    /// Address to listen on for TLS (`--tls-port` on the plain address's interface).
    pub bind: SocketAddr,
    /// The certificate chain, PEM, the server's own first.
    pub cert_file: PathBuf,
    /// The private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// CA certificates, PEM: when given, clients must present a certificate they signed.
    pub ca_cert_file: Option<PathBuf>,
}

impl TlsConfig {
    /// TLS on `bind` with this certificate chain and key, no client certificates.
    pub fn new(bind: SocketAddr, cert_file: impl Into<PathBuf>, key_file: impl Into<PathBuf>) -> TlsConfig {
        TlsConfig { bind, cert_file: cert_file.into(), key_file: key_file.into(), ca_cert_file: None }
    }
}

/// Why TLS could not be set up: which file, and what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("TLS: {0}")]
pub struct TlsError(String);

fn read(path: &Path, what: &str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| TlsError(format!("cannot read the {what} {}: {e}", path.display())))
}

fn certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError(format!("the {what} {} is not PEM certificates: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(TlsError(format!("no certificate in the {what} {}", path.display())));
    }
    Ok(certs)
}

/// The acceptor TLS connections are handshaken with.
///
/// # Errors
///
/// A [`TlsError`] naming the file that cannot be read or holds no usable certificate or
/// key, or what rustls refused (a key that does not match the certificate, ...).
pub(crate) fn acceptor(config: &TlsConfig) -> Result<TlsAcceptor, TlsError> {
    let provider: Arc<CryptoProvider> = Arc::new(ring::default_provider());
    let chain = certificates(&config.cert_file, "certificate file")?;
    let key_pem = read(&config.key_file, "key file")?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| TlsError(format!("no private key in the key file {}: {e}", config.key_file.display())))?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError(e.to_string()))?;
    let builder = match &config.ca_cert_file {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(ca, "CA certificate file")? {
                roots.add(cert).map_err(|e| TlsError(format!("a CA certificate in {}: {e}", ca.display())))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| TlsError(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let server = builder.with_single_cert(chain, key).map_err(|e| TlsError(e.to_string()))?;
    Ok(TlsAcceptor::from(Arc::new(server)))
}
