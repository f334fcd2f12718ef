//! `chessboardd voice-pack`: make or check a voice pack for `--speech clips`.

use std::path::{Path, PathBuf};

use chessboardd::speech::tools;

use chessboardd::settings::{Flags, Settings};

use super::{config_file, load_settings, Fail};

#[derive(clap::Args)]
pub struct VoicePackArgs {
    #[command(subcommand)]
    pub what: VoicePackCommand,
}

#[derive(clap::Subcommand)]
pub enum VoicePackCommand {
    /// Render every word of a language with espeak-ng into DIR, one WAV file per word
    Build(PackArgs),
    /// List the words DIR lacks (exit 1 when any is missing)
    Check(PackArgs),
}

#[derive(clap::Args)]
pub struct PackArgs {
    #[arg(long)]
    pub lang: Option<String>,
    pub dir: PathBuf,
}

pub fn run(args: VoicePackArgs) -> Result<(), Fail> {
    match args.what {
        VoicePackCommand::Build(a) => build(&settings_in(a.lang)?, &a.dir),
        VoicePackCommand::Check(a) => check(&settings_in(a.lang)?, &a.dir),
    }
}

/// The config's settings, in the language asked for.
fn settings_in(lang: Option<String>) -> Result<Settings, Fail> {
    let flags = Flags {
        lang,
        ..Flags::default()
    };
    load_settings(config_file(None).as_deref(), &flags)
}

fn build(cfg: &Settings, dir: &Path) -> Result<(), Fail> {
    let n = tools::build_pack(dir, &cfg.engine.phrases.words, cfg.speech.voice)
        .map_err(|e| Fail(1, e.to_string()))?;
    println!("{}: {n} words", dir.display());
    Ok(())
}

fn check(cfg: &Settings, dir: &Path) -> Result<(), Fail> {
    let missing = tools::check_pack(dir, &cfg.engine.phrases.words);
    if missing.is_empty() {
        println!("{}: complete", dir.display());
        return Ok(());
    }
    for w in &missing {
        println!("{w}");
    }
    Err(Fail(
        1,
        format!(
            "{}: {} words missing (listed above)",
            dir.display(),
            missing.len()
        ),
    ))
}
