#!/usr/bin/env python3
"""The daemon killed while people play on, as a club meets it.

Each run plays the first plies of a game on a simulated serial board (`chessboardd simulate`,
a pseudo-terminal: DIY, DGT and ChessLink in turn) at 30 times people's tempo. `chessboardd run`
reads it; once its journal holds some plies it is killed with SIGKILL and started again 0, 2.5
or 5 s later, while the simulated players make up to 4 more moves (`simulate --play-on 4`). When
the game is over, and the players have left the final position standing 5 s (`simulate --linger`,
longer than the mismatch delay: a board the daemon cannot tell yet is read once it stands still),
the record is compared with the game played: right; the same moves in an order the board could
not tell, and the daemon said so ("Zugfolge unsicher"); a wrong move left in it; or stopped short
of the end. Prints a line a run and the sums.

Usage: scripts/bench-restarts.py [--runs N] [--bin BINARY] [--linger S] [--keep DIR] [GAME.pgn ...]
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROTOCOLS = ["diy", "dgt", "chesslink"]
DOWNTIMES = [0.0, 2.5, 5.0]
PLIES = 30


def sans(pgn_text):
    """The main line's moves of the first game of a PGN text, as SAN tokens."""
    text = re.sub(r"\[[^\]]*\]", " ", pgn_text)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r";[^\n]*", " ", text)
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", " ", text)
    moves = []
    for tok in text.split():
        tok = re.sub(r"^\d+\.(\.\.)?", "", tok)
        tok = tok.rstrip("!?")
        if not tok or tok.startswith("$") or tok in ("1-0", "0-1", "1/2-1/2", "*"):
            continue
        moves.append(tok.rstrip("+#"))
    return moves


def movetext(moves):
    out = []
    for i, m in enumerate(moves):
        if i % 2 == 0:
            out.append(f"{i // 2 + 1}.")
        out.append(m)
    return " ".join(out) + " *\n"


def kept(binary, state):
    r = subprocess.run(
        [binary, "games", "--state-dir", state, "--pgn", "1"],
        capture_output=True,
        text=True,
    )
    return sans(r.stdout) if r.returncode == 0 else []


def daemon(binary, board, state, log):
    return subprocess.Popen(
        [binary, "run", "--board", board, "--speech", "text", "--events-json",
         "--state-dir", state],
        stdout=log,
        stderr=log,
    )


def one_run(binary, i, game_moves, workdir, keep, linger):
    proto = PROTOCOLS[i % len(PROTOCOLS)]
    down = DOWNTIMES[(i // len(PROTOCOLS)) % len(DOWNTIMES)]
    played = game_moves[:PLIES]
    kill_after = 6 + (i * 7) % (len(played) - 12)
    d = os.path.join(workdir, f"run{i}")
    os.makedirs(d)
    source = os.path.join(d, "game.pgn")
    with open(source, "w") as f:
        f.write(movetext(played))
    link = os.path.join(d, "board")
    state = os.path.join(d, "state")
    log = open(os.path.join(d, "daemons.log"), "a")
    sim = subprocess.Popen(
        [binary, "simulate", "--protocol", proto, "--link", link, "--pgn", source,
         "--speed", "30", "--play-on", "4"] + linger,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    t = time.monotonic()
    while not os.path.exists(link) and time.monotonic() - t < 10:
        time.sleep(0.02)
    board = f"{proto}:{link}"
    dm = daemon(binary, board, state, log)
    t = time.monotonic()
    while len(kept(binary, state)) < kill_after and time.monotonic() - t < 90:
        time.sleep(0.05)
    before = len(kept(binary, state))
    dm.kill()
    dm.wait()
    time.sleep(down)
    dm = daemon(binary, board, state, log)
    try:
        sim.wait(timeout=180)
        ended = True
    except subprocess.TimeoutExpired:
        sim.kill()
        sim.wait()
        ended = False
    time.sleep(1.0)
    dm.send_signal(signal.SIGTERM)
    try:
        dm.wait(timeout=10)
    except subprocess.TimeoutExpired:
        dm.kill()
        dm.wait()
    log.close()
    record = kept(binary, state)
    with open(os.path.join(d, "daemons.log")) as f:
        text = f.read()
    recovered = text.count('"recovered":true')
    said_unsure = "Zugfolge unsicher" in text
    right = record == played
    # The same moves of each side in another order, where the daemon said it could not tell
    # the order: what an occupancy board cannot tell after a gap, marked as such.
    same_moves = len(record) == len(played) and all(
        sorted(record[c::2]) == sorted(played[c::2]) for c in (0, 1)
    )
    order = not right and same_moves and said_unsure
    wrong = not order and record != played[: len(record)]
    short = len(record) < len(played)
    verdict = (
        "right" if right
        else "the order of moves it could not tell, said so" if order
        else "WRONG MOVE LEFT" if wrong
        else "stopped short"
    )
    print(
        f"run {i + 1:2}: {proto:9} down {down:3.1f} s, killed at ply {before:2}: "
        f"{len(record):2}/{len(played)} plies, {verdict}; {recovered} moves read afterwards"
        f"{', game not ended' if not ended else ''}",
        flush=True,
    )
    if not right:
        print(f"        played   {' '.join(played)}\n        recorded {' '.join(record)}")
        if keep:
            shutil.copytree(d, os.path.join(keep, f"run{i + 1}"))
    return right, order, wrong, short


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--bin", default="target/release/chessboardd")
    ap.add_argument("--linger", type=float, default=5.0,
                    help="seconds the final position stands before the simulation ends "
                    "(simulate --linger; 0: leave simulate's default)")
    ap.add_argument("--keep", help="copy the runs not read right (game, state, daemons' log) here")
    ap.add_argument("games", nargs="*", default=[
        "tests/data/games/molinari-bordais-1979.pgn",
        "tests/data/games/nepomniachtchi-liren-game1.pgn",
        "tests/data/games/kasparov-deep-blue-1997.pgn",
        "tests/data/games/anastasian-lewis.pgn",
    ])
    a = ap.parse_args()
    games = []
    for path in a.games:
        with open(path) as f:
            moves = sans(f.read())
        if len(moves) >= 20:
            games.append(moves)
    if not games:
        sys.exit("no game of 20 plies or more")
    linger = ["--linger", str(a.linger)] if a.linger > 0 else []
    sums = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory(prefix="chessboardd-restarts-") as w:
        for i in range(a.runs):
            for k, v in enumerate(one_run(a.bin, i, games[i % len(games)], w, a.keep, linger)):
                sums[k] += int(v)
    print(
        f"restarts while play goes on: {sums[0]}/{a.runs} records right, {sums[1]} with moves "
        f"in an order the board could not tell (said), {sums[2]} with a wrong move left, "
        f"{sums[3]} stopped short of the end"
    )


if __name__ == "__main__":
    main()
