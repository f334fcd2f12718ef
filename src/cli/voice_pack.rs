//! `chessboardd voice-pack`: make or check a voice pack for `--speech clips`.

use std::path::{Path, PathBuf};

use chessboardd::speech::tools;

use super::{phrases_for, Fail};

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
        VoicePackCommand::Build(a) => build(a.lang.as_deref(), &a.dir),
        VoicePackCommand::Check(a) => check(a.lang.as_deref(), &a.dir),
    }
}

fn build(lang: Option<&str>, dir: &Path) -> Result<(), Fail> {
    let (cfg, phrases) = phrases_for(lang, None)?;
    let n = tools::build_pack(dir, &phrases.words, cfg.speech.voice)
        .map_err(|e| Fail(1, e.to_string()))?;
    println!("{}: {n} words", dir.display());
    Ok(())
}

fn check(lang: Option<&str>, dir: &Path) -> Result<(), Fail> {
    let (_, phrases) = phrases_for(lang, None)?;
    let missing = tools::check_pack(dir, &phrases.words);
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
