//! `chessboardd broadcast`: the live games of every board of a round, from an MQTT broker.

use std::path::PathBuf;

use chessboardd::settings::Flags;

use super::{config_file, load_settings, termination, Fail, EXIT_CONFIG};

#[derive(clap::Args)]
pub struct BroadcastArgs {
    /// The broker: mqtt://HOST[:PORT], mqtts://HOST[:PORT] for TLS; default: mqtt.url of
    /// the config. A user and password go in the config (mqtt.username, mqtt.password_file):
    /// USER:PASSWORD@HOST works too, but anyone who lists the processes sees it
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// Where the PGN files go (made if missing; games already there are kept)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The config whose [mqtt] section gives the user name, password file, TLS files and
    /// topic prefix (default /etc/chessboardd/config.toml, when there is one)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `chessboardd broadcast`: follows the boards of a round through the broker until SIGTERM.
pub fn run(args: BroadcastArgs) -> Result<(), Fail> {
    let BroadcastArgs {
        mqtt: url,
        out,
        config,
    } = args;
    let flags = Flags {
        mqtt: url,
        ..Flags::default()
    };
    let cfg = load_settings(config_file(config.as_deref()).as_deref(), &flags)?;
    let settings = cfg.mqtt.ok_or_else(|| {
        Fail(
            EXIT_CONFIG,
            "no broker: give --mqtt URL (or mqtt.url in the config)".into(),
        )
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    rt.block_on(async {
        let shutdown = termination();
        tracing::info!(
            "following {}/+/pgn at {}; the games go to {}",
            settings.prefix,
            settings.url,
            out.display()
        );
        let round = chessboardd::broadcast::broadcast(&settings, &out, shutdown)
            .await
            .map_err(|e| Fail(1, e))?;
        tracing::info!(
            "{} boards in {}; {} messages dropped",
            round.boards(),
            out.join(chessboardd::broadcast::ROUND_FILE).display(),
            round.rejected
        );
        Ok(())
    })
}
