//! The game as `/api/state` (and the broker's `state` topic) shows it.

use serde_json::json;
use shakmaty::{Color, Position};

use crate::engine::event::color_name;
use crate::engine::game::fen_of;
use crate::engine::{Engine, Millis};

/// The game as `/api/state` shows it.
pub fn state_json(engine: &Engine, now: Millis) -> String {
    let game = engine.game();
    let phrases = &engine.settings().phrases;
    let moves: Vec<serde_json::Value> = game
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
    json!({
        "fen": fen_of(&game.pos),
        "start_fen": fen_of(&game.start),
        "turn": color_name(turn),
        "moves": moves,
        "last_move": moves.last().map(|m| m["uci"].clone()),
        "clock": clock,
        "result": game.ending.map(|e| e.result()),
        "reason": game.ending.map(|e| e.reason),
        "winner": game.ending.and_then(|e| e.winner).map(|c: Color| color_name(c)),
        "lang": phrases.lang.tag(),
    })
    .to_string()
}
