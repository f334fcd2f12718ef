#!/usr/bin/env python3
"""Compares what chessboardd and a position matcher read of the same script with the games that
were played (the script's `# game N: UCI ...` comments, as `chessboardd bench script` writes them).

Usage: compare-readers.py SCRIPT EVENTS.jsonl MATCHER.txt
  EVENTS.jsonl: `chessboardd replay SCRIPT`; MATCHER.txt: `matcher.py SCRIPT` (`game N: UCI ...`).
Prints, for each reader: the moves it read exactly (a game's moves up to its first mistake), the
games it read exactly, the games whose final record has a wrong move left (a move that differs
from the game's at its ply, or one past the game's end), and for chessboardd its `correction`
events (each takes back every ply from its `ply` on when the record is rebuilt from the events).
Then every game where chessboardd read fewer moves exactly than the matcher, or left more wrong
moves in its record. Exit status 1 when there is one.
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
    """Each game's record as the events leave it, and its correction events."""
    games, corrections = [], []
    with open(events, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e["type"] == "game_start":
                games.append([])
                corrections.append(0)
            elif e["type"] == "move":
                games[-1].append(e["uci"])
            elif e["type"] == "takeback":
                games[-1].pop()
            elif e["type"] == "correction":
                # Every ply from `ply` on is withdrawn (1 = white's first move).
                del games[-1][e["ply"] - 1:]
                corrections[-1] += 1
    return games, corrections


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


def wrong(truth, read):
    """The moves of a record that are not the game's at their ply."""
    return sum(1 for i, m in enumerate(read) if i >= len(truth) or m != truth[i])


def main(script, events, matcher_out):
    truth = played(script)
    by_engine, corrections = engine(events)
    by_matcher = matcher(matcher_out)
    if not (len(truth) == len(by_engine) == len(by_matcher)):
        sys.exit(f"games: {len(truth)} played, {len(by_engine)} in the events, "
                 f"{len(by_matcher)} from the matcher")
    readers = {"chessboardd": by_engine, "matcher": by_matcher}
    totals = {r: {"moves": 0, "games": 0, "wrong_games": 0} for r in readers}
    worse = []
    for i, t in enumerate(truth):
        e, m = by_engine[i], by_matcher[i]
        for name, read in readers.items():
            totals[name]["moves"] += exact(t, read[i])
            totals[name]["games"] += read[i] == t
            totals[name]["wrong_games"] += wrong(t, read[i]) > 0
        ne, nm = exact(t, e), exact(t, m)
        we, wm = wrong(t, e), wrong(t, m)
        if nm > ne:
            worse.append(f"game {i + 1}: chessboardd read {ne} moves, the matcher {nm}")
        if we > wm:
            worse.append(f"game {i + 1}: chessboardd left {we} wrong moves, the matcher {wm}")
    n, moves = len(truth), sum(len(t) for t in truth)
    parts = []
    for name, tot in totals.items():
        part = (f"{name}: {tot['moves']}/{moves} moves, {tot['games']}/{n} games read exactly, "
                f"{tot['wrong_games']} with a wrong move left")
        if name == "chessboardd":
            part += f", {sum(corrections)} corrections"
        parts.append(part)
    print("; ".join(parts))
    for w in worse:
        print("  " + w)
    return 1 if worse else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
