//! `chessboardd say`: speak a text, or a move in a position.

use chessboardd::speech::queue::Class;
use chessboardd::speech::speaker::Speaker;
use shakmaty::san::{San, SanPlus};

use chessboardd::settings::Flags;

use super::{config_file, load_settings, no_sound, position, Fail, SpeechFlags, EXIT_NO_SOUND};

#[derive(clap::Args)]
pub struct SayArgs {
    /// Announcement language: appendix-f (default), de, en, ro, sv
    #[arg(long)]
    pub lang: Option<String>,
    /// Announcement style for --move: short (default) or long
    #[arg(long)]
    pub style: Option<String>,
    #[command(flatten)]
    pub speech: SpeechFlags,
    /// Speak this move (SAN, e.g. Nf3) instead of a text; needs --fen
    #[arg(long = "move", value_name = "SAN", requires = "fen")]
    pub san: Option<String>,
    /// The position the move is made in
    #[arg(long, value_name = "FEN")]
    pub fen: Option<String>,
    /// What to say
    #[arg(required_unless_present = "san")]
    pub text: Vec<String>,
}

pub fn run(args: SayArgs) -> Result<(), Fail> {
    let SayArgs {
        lang,
        style,
        speech: flags,
        san,
        fen,
        text,
    } = args;
    let cfg = load_settings(
        config_file(None).as_deref(),
        &flags.over(Flags {
            lang,
            style,
            ..Flags::default()
        }),
    )?;
    let phrases = cfg.engine.phrases;
    let sc = cfg.speech;
    let text = match (san.as_deref(), fen.as_deref()) {
        (Some(san), Some(fen)) => {
            let pos = position(fen)?;
            let m = san
                .parse::<San>()
                .map_err(|_| Fail(1, format!("--move: '{san}' is not SAN")))?
                .to_move(&pos)
                .map_err(|_| Fail(1, format!("--move: {san} is not a legal move here")))?;
            phrases.announce(&SanPlus::from_move(pos, m), m)
        }
        _ => text.join(" "),
    };
    println!("{text}");
    let (mut speaker, no_device) = Speaker::start(sc).map_err(|e| Fail(1, e.to_string()))?;
    let no_sound_why =
        no_device.filter(|_| flags.audio_out.is_none() && flags.speech.as_deref() != Some("text"));
    if let Some(why) = no_sound_why {
        speaker.finish();
        return Err(Fail(
            EXIT_NO_SOUND,
            format!(
                "{}: the text was printed, not spoken; see Troubleshooting in the README",
                no_sound(&why)
            ),
        ));
    }
    speaker.say(&text, Class::Info, None);
    let report = speaker.finish();
    match report.errors.first() {
        Some(e) => Err(Fail(1, e.clone())),
        None => Ok(()),
    }
}
