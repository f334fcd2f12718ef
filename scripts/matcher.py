#!/usr/bin/env python3
"""A position matcher for `chessboardd replay` scripts, of the kind most Raspberry Pi chess boards
run: after every square change that has held for the debounce time, the board's occupancy is
looked up among the occupancies after each legal move (python-chess). A capture counts only when
the captured piece's square was seen empty since the last move; a promotion takes the piece last
pressed (queen by default). No touch-move, no clock, no recovery.

Usage: matcher.py SCRIPT
Prints, for each game of the script (each `setup`), one line: `game N: UCI UCI ...`.

It is the reference chessboardd is measured against (scripts/bench-matcher.sh): what it reads,
and how fast.
"""
import sys

import chess

DEBOUNCE_MS = 30
STEP_MS = 250  # a line without a time comes this long after the previous one
PROMOTIONS = {"promote-queen": chess.QUEEN, "promote-rook": chess.ROOK,
              "promote-bishop": chess.BISHOP, "promote-knight": chess.KNIGHT}


class Reader:
    def __init__(self):
        self.games = []
        self.start(chess.Board())

    def start(self, board):
        self.board = board
        self.settled = int(board.occupied)   # the debounced board
        self.raw = self.settled              # the last reading of each square
        self.changing = {}                   # square -> (occupied, since)
        self.emptied = 0                     # squares seen empty since the last move
        self.piece = chess.QUEEN
        self.moves = []
        self.games.append(self.moves)
        self.index()

    def index(self):
        """The occupancy after each legal move, with the move (and its captured square)."""
        self.after = {}
        for move in self.board.legal_moves:
            if move.promotion and move.promotion != self.piece:
                continue
            if self.board.is_en_passant(move):
                victim = chess.square(chess.square_file(move.to_square),
                                      chess.square_rank(move.from_square))
            elif self.board.piece_at(move.to_square):
                victim = move.to_square
            else:
                victim = None
            self.board.push(move)
            self.after.setdefault(int(self.board.occupied), []).append((move, victim))
            self.board.pop()

    def read(self, square, occupied, t):
        bit = 1 << square
        if bool(self.raw & bit) == occupied:
            return
        self.raw ^= bit
        self.changing.pop(square, None)
        if bool(self.settled & bit) != occupied:
            self.changing[square] = (occupied, t)

    def settle(self, now):
        due = sorted((since, sq) for sq, (_, since) in self.changing.items()
                     if since + DEBOUNCE_MS <= now)
        for _, sq in due:
            occupied, _ = self.changing.pop(sq)
            if occupied:
                self.settled |= 1 << sq
            else:
                self.settled &= ~(1 << sq)
                self.emptied |= 1 << sq
            for move, victim in self.after.get(self.settled, ()):
                if victim is None or self.emptied >> victim & 1:
                    self.board.push(move)
                    self.moves.append(move.uci())
                    self.emptied = 0
                    self.index()
                    break


def main(path):
    reader = Reader()
    fresh = True
    t = 0
    with open(path, encoding="utf-8") as script:
        for line in script:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            when = t + STEP_MS
            if words[0][0] == "@":
                when = int(words[0][1:])
                words = words[1:]
            elif words[0][0] == "+":
                when = t + int(words[0][1:])
                words = words[1:]
            verb, args = words[0], words[1:]
            if verb == "end":
                break
            if verb == "wait":
                reader.settle(when)
                t = when + int(args[0])
                continue
            reader.settle(when)
            t = when
            if verb == "setup":
                board = chess.Board() if args[0] == "startpos" else chess.Board(" ".join(args[1:]))
                if fresh:
                    reader.games.clear()
                reader.start(board)
            elif verb in ("lift", "place"):
                reader.read(chess.parse_square(args[0]), verb == "place", t)
            elif verb == "occupancy":
                mask = int(args[0], 16)
                for sq in range(64):
                    reader.read(sq, bool(mask >> sq & 1), t)
            elif verb == "press" and args[0] in PROMOTIONS:
                reader.piece = PROMOTIONS[args[0]]
                reader.index()
            fresh = False
    reader.settle(t + 10_000)
    out = sys.stdout
    for i, moves in enumerate(reader.games, 1):
        out.write(f"game {i}: {' '.join(moves)}\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
