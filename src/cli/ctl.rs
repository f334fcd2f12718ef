//! `chessboardd ctl`: one command to a running daemon, through its control socket.

use std::io::Write;
use std::path::PathBuf;

use chessboardd::settings::Flags;

use super::{config_file, load_settings, Fail, EXIT_CONFIG};

#[derive(clap::Args)]
pub struct CtlArgs {
    /// The daemon's control socket; default: control.socket of the config, else the
    /// service's /run/chessboardd/control.sock
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The config whose control.socket to use (default /etc/chessboardd/config.toml)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// last, moves N, time, turn, position [white|black] [PIECE], rank N, file X, square SQ,
    /// promote PIECE, draw, claim, resign, adjust, pause, resume, new-game, takeback, help,
    /// clock, start, toggle-pause, rate up|down, volume up|down
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Sends one command to a running daemon's control socket and prints its JSON answer.
pub fn run(args: CtlArgs) -> Result<(), Fail> {
    use std::io::BufRead;
    let CtlArgs {
        socket,
        config,
        command: words,
    } = args;
    let (socket, config) = (socket.as_deref(), config.as_deref());
    let from_config;
    let socket = match socket {
        Some(s) => s,
        None => {
            // The config's socket, or the service's (systemd's RuntimeDirectory).
            let service = PathBuf::from("/run/chessboardd/control.sock");
            from_config = load_settings(config_file(config).as_deref(), &Flags::default())?
                .control
                .socket
                .or_else(|| service.exists().then_some(service))
                .ok_or_else(|| {
                    Fail(
                        EXIT_CONFIG,
                        "no control socket: give --socket PATH, or set control.socket in the \
                         config (the service's is /run/chessboardd/control.sock)"
                            .into(),
                    )
                })?;
            &from_config
        }
    };
    let mut stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| {
        Fail(
            1,
            format!(
                "{}: {e} (is the daemon running with --socket?)",
                socket.display()
            ),
        )
    })?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .map_err(|e| Fail(1, e.to_string()))?;
    writeln!(stream, "{}", words.join(" "))
        .map_err(|e| Fail(1, format!("{}: {e}", socket.display())))?;
    let mut line = String::new();
    std::io::BufReader::new(&stream)
        .read_line(&mut line)
        .map_err(|e| Fail(1, format!("{}: no answer: {e}", socket.display())))?;
    print!("{line}");
    let ok = serde_json::from_str::<serde_json::Value>(&line).is_ok_and(|v| v["ok"] == true);
    if ok {
        Ok(())
    } else {
        Err(Fail(1, "the daemon did not take the command".into()))
    }
}
