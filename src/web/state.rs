//! The game as `/api/state` (and the broker's `state` topic) shows it.

use serde_json::{json, Value};
use shakmaty::{Color, Position};

use crate::engine::event::color_name;
use crate::engine::game::fen_of;
use crate::engine::{Engine, Millis};

/// The game as `/api/state` shows it; `date` is the PGN `Date` the game began on ("" unknown).
///
/// Besides the position, moves, clocks and result: who plays (`players`: each side's name,
/// title and rating from the `[game]` tags, null where the config has none), the `event`,
/// `site`, `round` and `board` from `[game]`, the `date`, and `check` (the square of the king
/// in check, or null).
pub fn state_json(engine: &Engine, now: Millis, date: &str) -> String {
    let game = engine.game();
    let phrases = &engine.settings().phrases;
    let tags = &engine.settings().pgn_tags;
    let tag = |name: &str| -> Value {
        tags.iter()
            .find(|(k, _)| k == name)
            .map_or(Value::Null, |(_, v)| Value::from(v.as_str()))
    };
    let player = |side: &str| {
        json!({
            "name": tag(side),
            "title": tag(&format!("{side}Title")),
            "elo": tag(&format!("{side}Elo")),
        })
    };
    let moves: Vec<Value> = game
        .plies
        .iter()
        .map(|p| {
            let color = p.before.turn();
            json!({
                "ply": crate::engine::game::ply_number(&p.before),
                "color": color_name(color),
                "san": p.san.to_string(),
                "uci": p.m.to_uci(shakmaty::CastlingMode::Standard).to_string(),
                "say": phrases.announce(&p.san, p.m),
                "fullmove": p.before.fullmoves().get(),
                "white_ms": p.clocks.map(|c| c.0),
                "black_ms": p.clocks.map(|c| c.1),
            })
        })
        .collect();
    let clock = engine.clocks(now).map(|(w, b)| {
        json!({"white_ms": w, "black_ms": b, "running": engine.running_clock().map(color_name)})
    });
    let turn = game.pos.turn();
    let check = game
        .pos
        .is_check()
        .then(|| game.pos.board().king_of(turn))
        .flatten()
        .map(|sq| sq.to_string());
    json!({
        "fen": fen_of(&game.pos),
        "start_fen": fen_of(&game.start),
        "turn": color_name(turn),
        "moves": moves,
        "last_move": moves.last().map(|m| m["uci"].clone()),
        "check": check,
        "clock": clock,
        "result": game.ending.map(|e| e.result()),
        "reason": game.ending.map(|e| e.reason),
        "winner": game.ending.and_then(|e| e.winner).map(|c: Color| color_name(c)),
        "lang": phrases.lang.tag(),
        "players": {"white": player("White"), "black": player("Black")},
        "event": tag("Event"),
        "site": tag("Site"),
        "round": tag("Round"),
        "board": tag("Board"),
        "date": (!date.is_empty()).then_some(date),
    })
    .to_string()
}
