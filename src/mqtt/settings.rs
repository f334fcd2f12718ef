//! The broker's settings: its address, the login, TLS, the board's id and the topic prefix, and
//! the checks of each.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rumqttc::{MqttOptions, TlsConfiguration, Transport};

/// The largest message sent or taken (a long game's state is some tens of kilobytes).
pub(super) const MAX_PACKET: usize = 1 << 20;
/// The broker is asked to drop a client silent for longer than this; the client pings sooner.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The default topic prefix.
pub const DEFAULT_PREFIX: &str = "chessboardd";

/// A broker's address: `mqtt://[USER[:PASSWORD]@]HOST[:PORT]`, `mqtts://` for TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerUrl {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<String>,
}

impl std::str::FromStr for BrokerUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<BrokerUrl, String> {
        let accepted = "accepted: mqtt://HOST[:PORT] (1883 by default) or mqtts://HOST[:PORT] \
                        for TLS (8883), optionally with USER:PASSWORD@ before the host";
        let (scheme, rest) = s
            .trim()
            .split_once("://")
            .ok_or_else(|| format!("'{s}' is not a broker address ({accepted})"))?;
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "mqtt" | "tcp" => false,
            "mqtts" | "ssl" => true,
            other => return Err(format!("'{other}://' is not a broker scheme ({accepted})")),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let (username, password) = match user {
            Some(u) => match u.split_once(':') {
                Some((n, p)) => (Some(n.to_string()), Some(p.to_string())),
                None => (Some(u.to_string()), None),
            },
            None => (None, None),
        };
        // [::1]:1883, host:1883, host
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("'{s}': an IPv6 address needs its closing ']'"))?;
            let port = match after {
                "" => None,
                a => Some(a.strip_prefix(':').ok_or_else(|| {
                    format!("'{s}': after ']' comes ':' and the port, or nothing")
                })?),
            };
            (h, port)
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.contains(['/', '?', '#']) {
            return Err(format!(
                "'{s}': a broker's address ends after the host and port ({accepted})"
            ));
        }
        if host.is_empty() || host.contains(' ') {
            return Err(format!("'{s}' has no host name ({accepted})"));
        }
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("'{p}' is not a port (accepted: 1 to 65535)"))?,
            None if tls => 8883,
            None => 1883,
        };
        Ok(BrokerUrl {
            tls,
            host: host.to_string(),
            port,
            username,
            password,
        })
    }
}

impl std::fmt::Display for BrokerUrl {
    /// The address without the password, for logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        let user = self
            .username
            .as_deref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        if self.host.contains(':') {
            write!(f, "{scheme}://{user}[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{user}{}:{}", self.host, self.port)
        }
    }
}

/// What a connection to the broker needs: the `[mqtt]` section of the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MqttSettings {
    pub url: BrokerUrl,
    /// The board's id in the topics; `None`: the host's name.
    pub board_id: Option<String>,
    pub prefix: String,
    /// The user name and password (also taken from the URL; the config's win).
    pub username: Option<String>,
    pub password: Option<String>,
    /// TLS: the certificate authority that signed the broker's certificate (PEM); `None`: the
    /// system's (`/etc/ssl/certs/ca-certificates.crt`).
    pub ca_file: Option<PathBuf>,
    /// TLS: the board's own certificate and key (PEM), for brokers that ask for one.
    pub client_auth: Option<(PathBuf, PathBuf)>,
}

impl MqttSettings {
    pub fn new(url: BrokerUrl) -> MqttSettings {
        MqttSettings {
            url,
            board_id: None,
            prefix: DEFAULT_PREFIX.to_string(),
            username: None,
            password: None,
            ca_file: None,
            client_auth: None,
        }
    }

    /// The board's id: as configured, else the host's name.
    pub fn board_id(&self) -> String {
        self.board_id.clone().unwrap_or_else(|| {
            let name = host_name();
            let id: String = name
                .chars()
                .map(|c| if id_char(c) { c } else { '-' })
                .collect();
            if id.is_empty() {
                "board".into()
            } else {
                id
            }
        })
    }

    /// The user name and password to log in with, if any.
    fn login(&self) -> Option<(String, String)> {
        let user = self.username.clone().or(self.url.username.clone())?;
        let password = self.password.clone().or(self.url.password.clone());
        Some((user, password.unwrap_or_default()))
    }

    /// Says so in the log when a password would go over the network unencrypted.
    pub fn warn_clear_password(&self) {
        if self.login().is_some_and(|(_, p)| !p.is_empty()) && !self.url.tls {
            tracing::warn!(
                "mqtt: the password goes over the network in clear text ({}); use mqtts:// \
                 where others can listen",
                self.url
            );
        }
    }

    /// The TLS transport for an mqtts:// url (`None`: plain TCP).
    fn tls(&self) -> Result<Option<Transport>, String> {
        if !self.url.tls {
            return Ok(None);
        }
        let ca_path = self
            .ca_file
            .clone()
            .unwrap_or_else(|| PathBuf::from(SYSTEM_CA));
        let ca = read_pem(&ca_path, "CERTIFICATE")?;
        let client_auth = match &self.client_auth {
            Some((cert, key)) => Some((read_pem(cert, "CERTIFICATE")?, read_pem(key, "KEY")?)),
            None => None,
        };
        Ok(Some(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth,
        })))
    }

    /// The publishing connection's options (MQTT 3.1.1) for a client called `client_id`.
    pub(super) fn options(&self, client_id: &str) -> Result<MqttOptions, String> {
        let mut o = MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        o.set_keep_alive(KEEP_ALIVE);
        o.set_max_packet_size(MAX_PACKET, MAX_PACKET);
        o.set_clean_session(true);
        if let Some((u, p)) = self.login() {
            o.set_credentials(u, p);
        }
        if let Some(t) = self.tls()? {
            o.set_transport(t);
        }
        Ok(o)
    }

    /// The subscribing connection's options (MQTT 5, so that the broker itself keeps back a
    /// message larger than `MAX_PACKET` instead of sending it and losing the connection).
    pub(crate) fn options_v5(&self, client_id: &str) -> Result<rumqttc::v5::MqttOptions, String> {
        let mut o = rumqttc::v5::MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        o.set_keep_alive(KEEP_ALIVE);
        o.set_max_packet_size(Some(MAX_PACKET as u32));
        o.set_clean_start(true);
        if let Some((u, p)) = self.login() {
            o.set_credentials(u, p);
        }
        if let Some(t) = self.tls()? {
            o.set_transport(t);
        }
        Ok(o)
    }
}

/// Debian's bundle of the certificate authorities the system trusts.
pub const SYSTEM_CA: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Reads a PEM file that must hold a `what` ("CERTIFICATE", "KEY").
pub fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let found = if what == "KEY" {
        // An encrypted key is no key here: the daemon has nobody to ask for its passphrase.
        PrivateKeyDer::from_pem_slice(&bytes).is_ok()
    } else {
        let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&bytes).collect();
        match certs {
            Ok(c) => !c.is_empty(),
            Err(e) => return Err(format!("{}: a damaged PEM file ({e:?})", path.display())),
        }
    };
    if !found {
        let hint = if what == "KEY" {
            " (-----BEGIN PRIVATE KEY-----, RSA or EC, not encrypted)"
        } else {
            " (-----BEGIN CERTIFICATE-----)"
        };
        return Err(format!(
            "{}: no PEM {} in it{hint}",
            path.display(),
            what.to_lowercase()
        ));
    }
    Ok(bytes)
}

/// A character a board id may have (it is a topic level and a file name).
pub fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Checks a board id as a topic level: letters, digits, `-`, `_` and `.`, 1 to 64 of them,
/// not starting with `.`.
pub fn check_topic_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 64 || !id.chars().all(id_char) || id.starts_with('.') {
        return Err(format!(
            "'{id}' is not a board id (accepted: 1 to 64 letters, digits, '-', '_' and '.', \
             not starting with '.')"
        ));
    }
    Ok(())
}

/// Checks a topic prefix: one or more topic levels, without wildcards.
pub fn check_prefix(p: &str) -> Result<(), String> {
    if p.is_empty()
        || p.starts_with('/')
        || p.starts_with('$')
        || p.ends_with('/')
        || p.contains("//")
        || p.contains(['+', '#', '\0'])
    {
        return Err(format!(
            "'{p}' is not a topic prefix (accepted: topic levels such as \"chessboardd\" or \
             \"club/round3\", without '+', '#', a '$' in front or a '/' at either end)"
        ));
    }
    Ok(())
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_urls() {
        let u: BrokerUrl = "mqtt://localhost".parse().unwrap();
        assert_eq!((u.tls, u.host.as_str(), u.port), (false, "localhost", 1883));
        let u: BrokerUrl = "mqtts://club:secret@broker.lan:8884/".parse().unwrap();
        assert_eq!((u.tls, u.host.as_str(), u.port), (true, "broker.lan", 8884));
        assert_eq!(u.username.as_deref(), Some("club"));
        assert_eq!(u.password.as_deref(), Some("secret"));
        assert_eq!(u.to_string(), "mqtts://club@broker.lan:8884");
        let u: BrokerUrl = "mqtts://[::1]".parse().unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 8883));
        assert_eq!(u.to_string(), "mqtts://[::1]:8883");
        for bad in [
            "localhost",
            "http://x",
            "mqtt://",
            "mqtt://h:0",
            "mqtt://h:99999",
            "mqtt://[::1",
            "mqtt://[::1]junk",
        ] {
            assert!(bad.parse::<BrokerUrl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn pem_files_are_read_for_what_they_hold() {
        let dir = std::env::temp_dir().join(format!("chessboardd-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, label: &str, body: &str| {
            let p = dir.join(name);
            std::fs::write(
                &p,
                format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"),
            )
            .unwrap();
            p
        };
        let cert = file("cert.pem", "CERTIFICATE", "AAEC");
        let key = file("key.pem", "PRIVATE KEY", "AAEC");
        let encrypted = file("enc.pem", "ENCRYPTED PRIVATE KEY", "AAEC");
        let request = file("req.pem", "CERTIFICATE REQUEST", "AAEC");
        let damaged = file("bad.pem", "CERTIFICATE", "!!not base64!!");
        assert!(read_pem(&cert, "CERTIFICATE").is_ok());
        assert!(read_pem(&key, "KEY").is_ok());
        assert!(read_pem(&key, "CERTIFICATE")
            .unwrap_err()
            .contains("no PEM certificate"));
        assert!(read_pem(&encrypted, "KEY")
            .unwrap_err()
            .contains("not encrypted"));
        assert!(read_pem(&request, "CERTIFICATE").is_err());
        assert!(read_pem(&damaged, "CERTIFICATE")
            .unwrap_err()
            .contains("damaged"));
        assert!(read_pem(&dir.join("none.pem"), "KEY")
            .unwrap_err()
            .contains("none.pem"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ids_and_prefixes() {
        assert!(check_topic_id("board-1").is_ok());
        assert!(check_topic_id("b.2_x").is_ok());
        for bad in ["", "a/b", "a+b", "#", ".hidden", &"x".repeat(65)] {
            assert!(check_topic_id(bad).is_err(), "{bad}");
        }
        assert!(check_prefix("club/round3").is_ok());
        for bad in ["", "/a", "a/", "a//b", "a/+", "a/#", "$share/g"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
    }
}
