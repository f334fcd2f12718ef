//! How the arbiter reads the board: each batch of debounced changes is taken into the
//! decoder's view, the lifts read as touches of the player to move, and what the board shows
//! decided: a legal move (completed, or held back a moment), an unfinished or illegal one,
//! pieces in the hand, or something nothing explains (the decoder's stories, `recovery`).

use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square};

use super::arbiter::{Engine, Held, Hold, Mismatch, Phase, AGREE_AFTER_OBSERVATIONS};
use super::clock::ClockSwitch;
use super::decoder::debounce::{Change, EMPTY};
use super::decoder::log::{Seen, Trace};
use super::decoder::physical::code_piece;
use super::decoder::recognise::{self, classify, Verdict};
use super::event::{Event, EventKind, Millis, Priority};
use super::game::fen_of;
use super::revise::Revision;
use super::rules::Mode;
use super::turn::{Commit, Swap, Touch, SEEN_BOUND};

impl Engine {
    /// Changes that became stable at the same moment: what the board did, and what it means.
    pub(super) fn on_batch(&mut self, batch: &[Change], out: &mut Vec<Event>) {
        self.observe(batch);
        if self
            .gap_reading
            .is_some_and(|g| batch.first().is_some_and(|c| c.t >= g))
        {
            // The board after its link came back: what it shows was done while nobody saw,
            // in an order nobody knows. It is read as after lost readings (the moves that
            // explain it), and touches are not judged this turn.
            self.gap_reading = None;
            self.turn.gap = true;
            self.turn.touch_unknown = true;
            let t = batch.first().map_or(self.now, |c| c.t);
            self.gaps.push(super::decoder::stories::Gap {
                from: self.gap_from.take().unwrap_or(t).min(t),
                to: t,
                changed: batch.iter().map(|c| c.square).collect(),
            });
            // A slide held back through the gap that the report shows still standing where it
            // was set down: it went no further, and is the move it looked.
            if self
                .held_slide()
                .is_some_and(|m| !batch.iter().any(|c| c.square == m.to()))
            {
                self.settle_hold(out);
            }
        }
        if self.adjourned() {
            self.adjourned_board(out);
            return;
        }
        if self.phase == Phase::Over {
            if self.phys.shows(Chess::default().board()) {
                self.new_game(self.now, Chess::default(), false, out);
            }
            return;
        }
        if self.swap(batch) {
            return;
        }
        // A takeback waits for the settle time; a change before that either completes a move
        // of the current position (the earlier position was a sensor's moment: no takeback) or
        // shows the earlier position stood until now: take back first, then read the change.
        if let Phase::Holding(
            h @ Hold {
                held: Held::Takeback(_),
                ..
            },
        ) = self.phase.clone()
        {
            self.phase = Phase::Moving;
            if !matches!(self.verdict(), Verdict::Moves(_)) {
                self.settle(h, out);
            }
        }
        // The board goes on from a held move (or one whose piece was lifted again): the mover
        // still at work, or the move complete and the change the opponent's?
        let held = match &self.phase {
            Phase::Holding(h) if h.due.is_some() => Some(h.clone()),
            _ => None,
        };
        let mut verdict = self.verdict();
        if let Some(h) = held.as_ref().filter(|h| matches!(h.held, Held::Breach(_))) {
            // A move against touch-move was released: the board going on does not undo it. It
            // is refused at its release, unless the board now tells another story; while legal
            // moves with a reading still to come explain it as well, not yet (until the board
            // has stood for the mismatch delay since the release).
            let h = h.clone();
            self.phase = Phase::Moving;
            match self.revise(false, Some(&h), out) {
                Revision::Taken => return,
                Revision::Waiting => {
                    self.defer(h);
                    return;
                }
                Revision::Current | Revision::Nothing => {}
            }
            self.settle(h, out);
            self.report_touches(out);
            self.evaluate(out);
            return;
        }
        if let Some(h) = held.or_else(|| self.alt.clone()) {
            match verdict {
                Verdict::Unexplained => {
                    self.alt = None;
                    self.turn.touches_deferred = false;
                    self.phase = Phase::Moving;
                    // The held move complete and the opponent at work, if that is what the board
                    // shows; else the moves that explain it from the last agreed position (the
                    // held move need not be among them: a reading lost on its way on, or what
                    // looked like an illegal move made of two legal ones).
                    if !self.explained_after(&h)
                        || matches!(h.held, Held::Move(m) if self.made_late(m))
                    {
                        match self.revise(false, Some(&h), out) {
                            Revision::Taken => return,
                            // Legal moves explain it, but not one story yet: the held move is
                            // not taken, nor an illegal move ruled, while the board may still
                            // tell which; whose lifts these are is not known yet either.
                            Revision::Waiting => {
                                self.turn.touches_deferred = true;
                                self.evaluate_as(Some(Verdict::Unexplained), out);
                                return;
                            }
                            _ => {}
                        }
                    }
                    let h = self.slid_on(&h).unwrap_or(h);
                    self.settle(h, out);
                    self.report_touches(out);
                    self.evaluate(out);
                    return;
                }
                Verdict::InProgress => {
                    // The held piece in the hand again: sliding on, or taken by the opponent.
                    self.phase = Phase::Moving;
                    self.turn.touches_deferred = true;
                    self.alt = Some(h);
                    self.mismatch.due = None;
                    return;
                }
                _ => {
                    // The mover went on: his touches since are his.
                    self.alt = None;
                    self.turn.touches_deferred = false;
                }
            }
        }
        // Moves the board was not seen making, before its lifts are read as the player to
        // move's touches: a legal explanation comes before an illegal one. Once nothing has
        // explained the board for the mismatch delay, while the players go on, a story need
        // not be one the board showed in its order. While a position is to be put back after a
        // ruling, every change is read against the stories too: a ruling the board does not
        // bear out (the players play on) is withdrawn.
        let revisable = match self.phase {
            Phase::Restoring { .. } => true,
            Phase::Moving => matches!(verdict, Verdict::Unexplained | Verdict::Illegal { .. }),
            _ => false,
        };
        if revisable && self.alt.is_none() && !self.passive() {
            match self.revise(false, None, out) {
                Revision::Taken => return,
                // Legal moves explain it, only not one story yet: no illegal move.
                Revision::Waiting => verdict = Verdict::Unexplained,
                Revision::Current | Revision::Nothing => {}
            }
        }
        self.report_touches(out);
        // (Reading the lifts as touches leaves what the board shows as it was.)
        self.evaluate_as(Some(verdict), out);
    }

    /// Takes the debouncer's glitches into the turn's observations; says whether there were any.
    pub(super) fn note_glitches(&mut self) -> bool {
        let logged = self.logging();
        let mut any = false;
        for (t, sq) in self.deb.drain_glitches() {
            any = true;
            let glitch = Seen {
                t,
                square: sq,
                what: Trace::Glitch,
                late: false,
            };
            // (Never before what was read already: a glitch is no touch.)
            let at = self
                .turn
                .seen
                .partition_point(|s| s.t <= t)
                .max(self.turn.reported);
            self.turn.seen.insert(at, glitch);
            if logged && t > self.agreed.t {
                let at = self.log.partition_point(|s| s.t <= t);
                self.log.insert(at, glitch);
            }
        }
        any
    }

    /// Takes the debouncer's echoes (squares read again as they stood) into the log for the
    /// stories; says whether there were any.
    pub(super) fn note_echoes(&mut self) -> bool {
        if !self.logging() {
            // (Dropped: the list is emptied.)
            self.deb.drain_echoes();
            return false;
        }
        let mut any = false;
        for (t, sq, state) in self.deb.drain_echoes() {
            let what = Trace::Echo {
                occupied: state != EMPTY,
            };
            // (The same echo again tells nothing more: a square read over and over is logged
            // once.)
            let again = self
                .log
                .iter()
                .rev()
                .find(|s| s.square == sq && s.what != Trace::Glitch)
                .is_some_and(|s| s.what == what);
            if t <= self.agreed.t || again {
                continue;
            }
            let echo = Seen {
                t,
                square: sq,
                what,
                late: false,
            };
            let at = self.log.partition_point(|s| s.t <= t);
            self.log.insert(at, echo);
            any = true;
        }
        any
    }

    /// What the board does is kept in the log for the stories: not while a move made elsewhere
    /// (the other board's, the computer's) is executed here, nor while this board is only
    /// watched, nor past the log's bound.
    fn logging(&self) -> bool {
        !self.log_full()
            && !matches!(
                self.phase,
                Phase::Replicating { .. } | Phase::Over | Phase::Adjourned { .. }
            )
            && !self.passive()
    }

    /// Takes a batch of changes into the physical board and the turn's observations.
    fn observe(&mut self, batch: &[Change]) {
        if self.turn.seen.len() >= SEEN_BOUND {
            self.turn.compact();
        }
        self.note_glitches();
        let logged = self.logging();
        for c in batch {
            self.phys.apply(c);
            let seen = Seen {
                t: c.t,
                square: c.square,
                what: if c.state == EMPTY {
                    Trace::Lifted
                } else {
                    Trace::Placed
                },
                late: c.whole,
            };
            self.turn.seen.push(seen);
            if logged {
                self.log.push(seen);
            }
        }
        // What the board did last: a placement when the batch has one (the end of a move shown
        // in one frame), else a lift.
        let last = batch
            .iter()
            .rev()
            .find(|c| c.state != EMPTY)
            .or(batch.last());
        if let Some(c) = last {
            self.last_change = Some((c.square, c.state != EMPTY));
        }
        // J'adoube (4.2) covers the pieces adjusted after it, until a piece is set down on a
        // square it did not stand on: that is a move.
        let home = self.game.pos.board().occupied();
        if batch
            .iter()
            .any(|c| c.state != EMPTY && !home.contains(c.square))
        {
            self.turn.adjusting = false;
        }
    }

    /// After a promotion made with the pawn still on its square, the next change tells whether
    /// lifting the piece there was the promoting player's swap or the opponent's touch. Returns
    /// true when the batch is taken care of.
    fn swap(&mut self, batch: &[Change]) -> bool {
        let Some(swap) = self.turn.swap else {
            return false;
        };
        let only_there = batch.len() == 1 && batch[0].square == swap.square;
        if swap.lifted.is_none() && only_there && batch[0].state == EMPTY {
            self.turn.swap = Some(Swap {
                lifted: Some(self.now),
                ..swap
            });
            // Not the opponent's touch (yet).
            self.turn.touches_deferred = true;
            return true;
        }
        self.turn.swap = None;
        if swap.lifted.is_some() {
            self.turn.touches_deferred = false;
            if only_there && batch[0].state != EMPTY {
                // The swap is done: the promoting player's, nothing to read.
                self.turn.reported = self.turn.seen.len();
                return true;
            }
        }
        false
    }

    /// What the board shows now in the game's position, counting the lifts not yet read.
    pub(super) fn verdict(&self) -> Verdict {
        let pos = &self.game.pos;
        let pending: Bitboard = self.turn.seen[self.turn.reported.min(self.turn.seen.len())..]
            .iter()
            .filter(|s| s.what == Trace::Lifted)
            .map(|s| s.square)
            .collect();
        let vacated = self.turn.vacated | (pending & pos.board().occupied());
        classify(
            pos,
            self.game.legal(),
            &self.phys,
            vacated,
            self.last_change,
        )
    }

    /// Reads the lifts not read yet as touches of the player to move, each at its time.
    pub(super) fn report_touches(&mut self, out: &mut Vec<Event>) {
        if self.turn.touches_deferred {
            return;
        }
        while self.turn.reported < self.turn.seen.len() {
            let s = self.turn.seen[self.turn.reported];
            self.turn.reported += 1;
            if s.what == Trace::Lifted && s.late && self.touched_since_last_report(s.t) {
                // A lift the board showed only in a whole-board report (its reading lost) was
                // made any time since the report before: perhaps before the pieces touched
                // since. The order of the touches is not known, and touch-move is not judged
                // this turn (a rook lifted, the king's lift seen only in the report: a castling
                // begun with the king was ruled begun with the rook, Art. 4.4b).
                self.turn.touch_unknown = true;
            }
            if s.what == Trace::Lifted {
                self.at(s.t, |e| e.on_lift(s.square, s.t, out));
            }
        }
    }

    /// The player to move has touched a piece since the whole-board report before the one
    /// at `t`.
    fn touched_since_last_report(&self, t: Millis) -> bool {
        let before = self
            .reports
            .iter()
            .rev()
            .find(|&&r| r < t)
            .copied()
            .unwrap_or(0);
        self.turn.touches.iter().any(|touch| touch.at > before)
    }

    /// Who made a touch: the player to move, or (a lift of the opponent's piece read as its
    /// owner's adjustment, `rules.opponent_lifts`) the piece's owner.
    pub(super) fn toucher(&self, t: &Touch) -> Color {
        let us = self.game.pos.turn();
        if self.s.owner_adjusts && t.piece.color != us {
            t.piece.color
        } else {
            us
        }
    }

    /// Appendix F2.9 (e): every piece touched in this turn that stands on its square again,
    /// and is not one of the `involved` squares (the move's own), is told put back, once.
    pub(super) fn tell_put_back(&mut self, involved: Bitboard, out: &mut Vec<Event>) {
        let occupied = self.phys.occupied();
        let mut told = Vec::new();
        for x in &self.turn.touches {
            if involved.contains(x.square)
                || self.turn.told.contains(x.square)
                || !occupied.contains(x.square)
            {
                continue;
            }
            told.push((*x, self.toucher(x)));
        }
        for (x, by) in told {
            self.turn.told.add(x.square);
            self.emit(
                out,
                EventKind::PutBack {
                    square: x.square,
                    piece: x.piece.role,
                    color: x.piece.color,
                    by,
                },
            );
        }
    }

    /// Since the last move was recorded, the board showed a piece set down on a square the
    /// record leaves empty, and a piece of the player who made that move lifted: both
    /// players may have moved.
    pub(super) fn both_may_have_moved(&self) -> bool {
        let since = self.game.plies.last().map_or(0, |p| p.t);
        let board = self.game.pos.board();
        let empty = !board.occupied();
        let movers = board.by_color(!self.game.pos.turn());
        let seen = |what: Trace, squares: Bitboard| {
            self.log
                .iter()
                .any(|s| s.t > since && s.what == what && squares.contains(s.square))
        };
        seen(Trace::Placed, empty) && seen(Trace::Lifted, movers)
    }

    fn on_lift(&mut self, sq: Square, t: Millis, out: &mut Vec<Event>) {
        // Executing the opponent's move, or a board watched while the opponent moves on his:
        // no touches here.
        if self.adjourned() {
            return;
        }
        if self.passive() || matches!(self.phase, Phase::Replicating { .. }) {
            // (A captured piece's square seen empty: the capture is being executed.)
            self.turn.vacated.add(sq);
            return;
        }
        let Some(piece) = self.game.pos.board().piece_at(sq) else {
            return;
        };
        self.turn.vacated.add(sq);
        if self.turn.adjusting || self.turn.touched.contains(sq) || self.turn.touch_unknown {
            return;
        }
        let us = self.game.pos.turn();
        self.turn.touch(
            Touch {
                square: sq,
                piece,
                at: t,
            },
            us,
        );
        self.emit(
            out,
            EventKind::Touched {
                square: sq,
                piece: piece.role,
                color: piece.color,
            },
        );
        if self.draw_offer.is_some_and(|by| by != us) {
            self.draw_offer = None;
            let text = self.s.phrases.words.draw_offer_lapsed.clone();
            self.say(out, text, Priority::Info);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Reading the board (what is held back: `holds`; moves not seen made: `recovery`)

    /// Looks at the board after a change and decides what it means.
    pub(super) fn evaluate(&mut self, out: &mut Vec<Event>) {
        self.evaluate_as(None, out);
    }

    /// [`Engine::evaluate`], with what the board shows when it is known already.
    fn evaluate_as(&mut self, known: Option<Verdict>, out: &mut Vec<Event>) {
        match self.phase.clone() {
            Phase::Over | Phase::Adjourned { .. } => return,
            Phase::Replicating { m } => {
                self.evaluate_replication(m, out);
                return;
            }
            Phase::Restoring { diff: refused } => {
                let pos_occ = self.game.pos.board().occupied();
                let occ = self.phys.occupied();
                let diff = (pos_occ & !occ, occ & !pos_occ);
                if self.phys.shows(self.game.pos.board()) {
                    self.phase = Phase::Moving;
                    self.restored(out);
                } else if diff != refused
                    && !recognise::in_progress(&self.game.pos, self.game.legal(), &self.phys)
                {
                    self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
                } else {
                    self.mismatch.due = None;
                }
                return;
            }
            Phase::Moving | Phase::Holding(_) => {}
        }
        self.phase = Phase::Moving;
        if self.passive() {
            // The opponent's turn, on his board: this one must keep the position.
            if self.phys.shows(self.game.pos.board()) {
                self.mismatch.due = None;
                if self.mismatch.owe_restored || self.mismatch.reported.is_some() {
                    self.restored(out);
                }
            } else {
                self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
            }
            return;
        }
        if self.alt.is_some() {
            // Still the held piece in the hand: wait for the board to tell.
            return;
        }
        let verdict = known.unwrap_or_else(|| self.verdict());
        match verdict {
            Verdict::Home => {
                // Home again after a piece was set down on a square the record leaves empty
                // and the last mover's piece lifted: perhaps both players went there and back,
                // their readings partly lost (Kf1 Ra4 Kf2 Ra5 look like nothing at all). The
                // stories are asked; while they wait (the last move may slide on), the lifts
                // are not told put back, and the board is read again once it has stood for the
                // settle time.
                let mut waiting = false;
                if self.both_may_have_moved() {
                    match self.revise(false, None, out) {
                        Revision::Taken => return,
                        Revision::Waiting => waiting = true,
                        Revision::Current | Revision::Nothing => {}
                    }
                }
                // Everything is home: pieces lifted and put back cannot be the victims of a
                // capture any more (else lifting the capturer alone would complete it).
                self.turn.vacated = Bitboard::EMPTY;
                if !waiting && self.log.len() > AGREE_AFTER_OBSERVATIONS {
                    // (Bounded: a board that showed the record after this many observations
                    // since the agreed point is agreed on as it stands.)
                    self.agree_standing();
                }
                if !waiting && !self.turn.touches_deferred && !self.turn.touch_unknown {
                    self.tell_put_back(Bitboard::EMPTY, out);
                }
                self.mismatch.due = waiting.then(|| self.now.saturating_add(self.s.settle_ms));
                self.turn.casual_illegal = None;
                if self.mismatch.owe_restored || self.mismatch.reported.is_some() {
                    self.restored(out);
                }
                return;
            }
            Verdict::Moves(candidates) => {
                self.mismatch.due = None;
                self.on_candidates(candidates, out);
                return;
            }
            _ => {}
        }
        // Casual play: the board put back to an earlier position takes moves back, once it has
        // stood for the settle time (a board that reports a new square before the old one
        // shows an earlier position for a moment).
        if self.s.mode == Mode::Casual && self.last_change.is_some_and(|(_, placed)| placed) {
            if let Some(plan) = self.takeback_plan() {
                self.hold(Held::Takeback(plan), Some(self.s.settle_ms));
                return;
            }
        }
        if verdict == Verdict::Unexplained {
            self.mismatch.since.get_or_insert(self.now);
        } else {
            self.mismatch.since = None;
        }
        match verdict {
            Verdict::Partial { from, to } => {
                self.mismatch.due = None;
                // 4.6b binds only a castling the touched pieces allow (not after 4.4b).
                let pos = &self.game.pos;
                let castle = self.game.legal().iter().copied().find(|m| {
                    m.from() == Some(from) && recognise::king_to(pos.turn(), m) == Some(to)
                });
                if let (None, Some(castle)) = (self.turn.committed, castle) {
                    if self.breach(castle).is_none() {
                        self.turn.committed = Some(Commit::Castle {
                            king: from,
                            king_to: to,
                        });
                    }
                }
            }
            Verdict::Illegal { from, to } => {
                self.mismatch.due = None;
                self.illegal_attempt(from, to, out);
            }
            Verdict::InProgress => {
                // A piece in the hand is no mismatch, however long; but one whose capture left
                // a trace (the captured piece swept off quicker than the debounce time) is
                // taken as made once the board has stood so.
                self.mismatch.due = self
                    .traced_capture_in_hand()
                    .then(|| self.now.saturating_add(self.s.mismatch_ms));
            }
            _ => self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms)),
        }
    }

    /// Two boards: is the opponent's move `m` executed on this board yet?
    fn evaluate_replication(&mut self, m: Move, out: &mut Vec<Event>) {
        // A capture on a board that sees only occupancy is executed when the captured piece's
        // square has been seen empty (before that, lifting the capturing piece alone looks the
        // same).
        let capture_seen = !matches!(
            m,
            Move::Normal {
                capture: Some(_),
                ..
            }
        ) || self.phys.ids()
            // (A board back from a lost link reports the position as it is: done meanwhile.)
            || self.relinked
            || self.turn.vacated.contains(m.to());
        if capture_seen && self.phys.shows(self.game.pos.board()) {
            self.relinked = false;
            self.phase = Phase::Moving;
            self.mismatch = Mismatch::default();
            self.emit(
                out,
                EventKind::Replicated {
                    uci: recognise::uci(m),
                },
            );
            self.agree_on_the_record();
            if std::mem::take(&mut self.computer_executing) {
                self.computer_move_executed(out);
            }
            return;
        }
        // Not yet, or half done: the board differs from the position before the move only on
        // the move's own squares (a piece in the hand). Not begun at all is no error either:
        // the player may still be listening.
        let Some(before) = self.game.plies.last().map(|p| p.before.clone()) else {
            return;
        };
        let (emptied, filled, victim) = recognise::footprint(before.turn(), &m);
        let involved = emptied | filled | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        let off = before.board().occupied() ^ self.phys.occupied();
        if (off & !involved).is_empty() && self.phys.wrong_pieces(self.game.pos.board()).is_empty()
        {
            // A capture begun and left half done (the captured piece taken off, the capturing
            // one not moved; or the capturing piece held on and on) is reminded, later than a
            // wrong execution: putting a piece aside takes a moment.
            self.mismatch.due = (m.is_capture() && !off.is_empty())
                .then(|| self.now.saturating_add(2 * self.s.mismatch_ms));
        } else {
            self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
        }
    }

    fn on_candidates(&mut self, candidates: Vec<Move>, out: &mut Vec<Event>) {
        let m = candidates[0];
        if m.is_promotion() {
            let turn = self.game.pos.turn();
            let shown = code_piece(self.phys.code(m.to()))
                .filter(|p| p.color == turn && p.role != Role::Pawn);
            let chosen = shown.map(|p| p.role).or(self.promotion_chosen());
            if let Some(role) = chosen {
                if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
                    self.complete(*m, false, out);
                    return;
                }
            }
            // 4.6c binds the pawn to this square, if the touched pieces allow it to go there.
            if let (None, Some(pawn)) = (self.turn.committed, m.from()) {
                if self.breach(m).is_none() {
                    self.turn.committed = Some(Commit::Promote { pawn, to: m.to() });
                }
            }
            self.hold(Held::Promotion(m), Some(self.s.promotion_ms));
            return;
        }
        if recognise::could_slide_on(&self.game.pos, &m) || self.made_late(m) {
            self.hold(Held::Move(m), Some(self.s.settle_ms));
            return;
        }
        self.complete(m, false, out);
    }

    pub(super) fn promotion_timeout(&mut self, out: &mut Vec<Event>) {
        let candidates = self.matching_moves();
        let role = self.promotion_piece();
        if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
            self.complete(*m, false, out);
        }
    }

    pub(super) fn matching_moves(&self) -> Vec<Move> {
        recognise::matching_moves(
            &self.game.pos,
            self.game.legal(),
            &self.phys,
            self.turn.vacated,
        )
    }

    /// A piece released where no legal move takes it.
    fn illegal_attempt(&mut self, from: Square, to: Square, out: &mut Vec<Event>) {
        match self.s.mode {
            // An illegal move is completed when the clock is pressed (with a clock button),
            // or when it has stood for the settle time.
            Mode::Tournament if self.s.switch == ClockSwitch::Button => {
                self.hold(Held::Illegal(from, to), None);
            }
            Mode::Tournament => self.hold(Held::Illegal(from, to), Some(self.s.settle_ms)),
            Mode::Casual => {
                if self.turn.casual_illegal != Some((from, to)) {
                    self.turn.casual_illegal = Some((from, to));
                    self.mismatch.owe_restored = true;
                    let reason = super::rulings::illegal_reason(&self.game.pos, from, to);
                    let color = self.game.pos.turn();
                    self.emit(
                        out,
                        EventKind::Illegal {
                            color,
                            count: self.illegal_counts[color],
                            reason,
                            penalty: super::event::Penalty::None,
                            extra_ms: None,
                            attempted: format!("{from}{to}"),
                        },
                    );
                    let text = self.s.phrases.words.illegal_move.clone();
                    self.say(out, text, Priority::Error);
                }
            }
        }
    }

    pub(super) fn restored(&mut self, out: &mut Vec<Event>) {
        self.turn.vacated = Bitboard::EMPTY;
        self.mismatch = Mismatch::default();
        self.turn.casual_illegal = None;
        let fen = fen_of(&self.game.pos);
        self.emit(out, EventKind::Restored { fen });
        let text = self.s.phrases.words.restored.clone();
        self.say(out, text, Priority::Info);
        // The players put the position back as the arbiter asked: what was ruled stands, and
        // what the board did until now is agreed.
        if !self.rulings.is_empty() {
            self.agree_on_the_record();
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Square};

    use crate::engine::decoder::log::Trace;
    use crate::engine::input::{Reading, EMPTY};
    use crate::engine::{Engine, Settings};

    #[test]
    fn a_square_read_again_as_it_stood_is_logged_once() {
        let mut e = Engine::new(Settings::default());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        e.reading(1000, Reading::Square(Square::E2, EMPTY), &mut out);
        // e3 was empty all along: read empty, it was filled and emptied unseen. Read so a
        // thousand times more, it says nothing more.
        for t in 1100..2100 {
            e.reading(t, Reading::Square(Square::E3, EMPTY), &mut out);
        }
        let echoes: Vec<_> = e
            .log
            .iter()
            .filter(|s| matches!(s.what, Trace::Echo { .. }))
            .map(|s| (s.t, s.square))
            .collect();
        assert_eq!(echoes, [(1100, Square::E3)]);
    }
}
