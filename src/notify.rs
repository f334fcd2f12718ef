//! Telling systemd how the daemon is (the sd_notify protocol of a `Type=notify` service), and
//! logging to the journal when there is one.
//!
//! systemd gives the path of a datagram socket in `NOTIFY_SOCKET` (`@name` for the abstract
//! namespace); the daemon sends `READY=1` when it is ready, `STATUS=...` lines, `WATCHDOG=1`
//! pings at half of `WATCHDOG_USEC`, `RELOADING=1` and `STOPPING=1`. Without `NOTIFY_SOCKET`
//! (run from a shell) every call does nothing.

use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::time::Duration;

/// The link to systemd's notification socket, if there is one.
#[derive(Clone, Default)]
pub struct Notifier {
    sock: Option<Arc<(UnixDatagram, std::os::unix::net::SocketAddr)>>,
    watchdog: Option<Duration>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("connected", &self.sock.is_some())
            .field("watchdog", &self.watchdog)
            .finish()
    }
}

fn address(path: &str) -> std::io::Result<std::os::unix::net::SocketAddr> {
    match path.strip_prefix('@') {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
        }
        None => std::os::unix::net::SocketAddr::from_pathname(path),
    }
}

impl Notifier {
    /// From the environment systemd sets (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`).
    pub fn from_env() -> Notifier {
        let sock = std::env::var("NOTIFY_SOCKET")
            .ok()
            .filter(|p| !p.is_empty())
            .and_then(|p| {
                let addr = address(&p).ok()?;
                let s = UnixDatagram::unbound().ok()?;
                // A notification that cannot be taken at once is dropped: the daemon's loop
                // never waits for a reader.
                s.set_nonblocking(true).ok()?;
                Some(Arc::new((s, addr)))
            });
        let for_us = std::env::var("WATCHDOG_PID")
            .ok()
            .and_then(|p| p.parse::<u32>().ok())
            .is_none_or(|pid| pid == std::process::id());
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|u| u.parse::<u64>().ok())
            .filter(|u| *u > 0 && for_us)
            .map(|u| Duration::from_micros(u / 2).max(Duration::from_millis(1)));
        Notifier { sock, watchdog }
    }

    /// Sends one notification (lines `KEY=value`); errors are of no consequence.
    pub fn send(&self, state: &str) {
        if let Some(s) = &self.sock {
            let _ = s.0.send_to_addr(state.as_bytes(), &s.1);
        }
    }

    pub fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={status}"));
    }

    pub fn status(&self, status: &str) {
        self.send(&format!("STATUS={status}"));
    }

    /// How often to send `WATCHDOG=1`, when systemd watches.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.watchdog
    }

    pub fn watchdog(&self) {
        self.send("WATCHDOG=1");
    }
}

/// Sets up logging: to the journal when the daemon runs under systemd (its stderr is the
/// journal's stream, or the journal's socket is there), to standard error otherwise.
pub fn init_logging() {
    use tracing_subscriber::prelude::*;
    let under_journal =
        std::env::var_os("JOURNAL_STREAM").is_some() || std::env::var_os("INVOCATION_ID").is_some();
    if under_journal {
        if let Ok(layer) = tracing_journald::layer() {
            let _ = tracing_subscriber::registry()
                .with(layer.with_syslog_identifier("chessboardd".into()))
                .try_init();
            return;
        }
    }
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_ansi(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_reach_the_socket() {
        let dir = std::env::temp_dir().join(format!("chessboardd-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let _ = std::fs::remove_file(&path);
        let listener = UnixDatagram::bind(&path).unwrap();
        let n = Notifier {
            sock: Some(Arc::new((
                UnixDatagram::unbound().unwrap(),
                address(path.to_str().unwrap()).unwrap(),
            ))),
            watchdog: None,
        };
        n.ready("waiting for the board");
        let mut buf = [0u8; 256];
        let len = listener.recv(&mut buf).unwrap();
        assert_eq!(
            std::str::from_utf8(&buf[..len]).unwrap(),
            "READY=1\nSTATUS=waiting for the board"
        );
        // Without a socket nothing happens.
        Notifier::default().ready("x");
        // Nobody reading: sending never blocks (the queue fills, the rest is dropped).
        std::env::set_var("NOTIFY_SOCKET", &path);
        let n = Notifier::from_env();
        let t = std::time::Instant::now();
        for _ in 0..1000 {
            n.status("busy");
        }
        assert!(t.elapsed() < Duration::from_secs(5));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
