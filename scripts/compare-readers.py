#!/usr/bin/env python3
"""Compares what chessboardd and a position matcher read of the same script with the games that
were played (the script's `# game N: UCI ...` comments, as `chessboardd bench script` writes them).

Usage: compare-readers.py SCRIPT EVENTS.jsonl MATCHER.txt
  EVENTS.jsonl: `chessboardd replay SCRIPT`; MATCHER.txt: `matcher.py SCRIPT` (`game N: UCI ...`).
Prints the games and moves each read exactly (a game's moves up to its first mistake), and every
game where the matcher read more than chessboardd. Exit status 1 when there is one.
"""
import json
import sys


def played(script):
    games = []
    with open(script, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# game "):
                games.append(line.split(":", 1)[1].split())
    return games


def engine(events):
    games = []
    with open(events, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e["type"] == "game_start":
                games.append([])
            elif e["type"] == "move":
                games[-1].append(e["uci"])
            elif e["type"] == "takeback":
                games[-1].pop()
    return games


def matcher(path):
    with open(path, encoding="utf-8") as f:
        return [line.split(":", 1)[1].split() for line in f if line.startswith("game ")]


def exact(truth, read):
    n = 0
    for a, b in zip(truth, read):
        if a != b:
            break
        n += 1
    return n


def main(script, events, matcher_out):
    truth = played(script)
    by_engine = engine(events)
    by_matcher = matcher(matcher_out)
    if not (len(truth) == len(by_engine) == len(by_matcher)):
        sys.exit(f"games: {len(truth)} played, {len(by_engine)} in the events, "
                 f"{len(by_matcher)} from the matcher")
    totals = {"moves": 0, "engine": 0, "matcher": 0, "engine_games": 0, "matcher_games": 0}
    worse = []
    for i, (t, e, m) in enumerate(zip(truth, by_engine, by_matcher), 1):
        ne, nm = exact(t, e), exact(t, m)
        totals["moves"] += len(t)
        totals["engine"] += ne
        totals["matcher"] += nm
        totals["engine_games"] += e == t
        totals["matcher_games"] += m == t
        if nm > ne:
            worse.append(f"game {i}: chessboardd read {ne} moves, the matcher {nm}")
    n = len(truth)
    print(f"chessboardd: {totals['engine_games']}/{n} games, "
          f"{totals['engine']}/{totals['moves']} moves read exactly; "
          f"matcher: {totals['matcher_games']}/{n} games, "
          f"{totals['matcher']}/{totals['moves']} moves")
    for w in worse:
        print("  " + w)
    return 1 if worse else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
