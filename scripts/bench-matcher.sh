#!/usr/bin/env bash
# chessboardd side by side with a position matcher of the kind most Raspberry Pi chess boards run
# (scripts/matcher.py, python-chess), on the same replay scripts of games played at people's
# tempo (`chessboardd bench script`):
#   1. what each reads of the 410 games of tests/data/games at each tempo, with each fault model
#      (none, lost-next, lost-periodic, late, swaps, combined, pulls: `chessboardd bench script
#      --faults`; FAULTS="late combined" runs only those); fails when, on a game, the matcher
#      reads a move chessboardd does not or chessboardd leaves more wrong moves in its record;
#   2. how long each takes over 200 games, and the ratio: games a matcher can follow (lifts and
#      placements only), and games with every quirk of the boards (where it loses its place).
# python-chess goes into a virtual environment under target/, never into the system's Python.
# MATCHER=path/to/other_matcher.py times another matcher (it must read the same scripts).
# Usage: scripts/bench-matcher.sh [RUNS]   (RUNS: timed runs of each, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
venv=target/matcher-venv
if ! "$venv/bin/python" -c "import chess" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet chess
fi
py="$venv/bin/python"
matcher=${MATCHER:-scripts/matcher.py}
cargo build --release --quiet
bin=target/release/chessboardd
dir=target/matcher
mkdir -p "$dir"
games=(tests/data/games/{anastasian-lewis,kasparov-deep-blue-1997,molinari-bordais-1979,nepomniachtchi-liren-game1,seed-example,selfplay-400}.pgn)

status=0
models=${FAULTS:-none lost-next lost-periodic late swaps combined pulls}
echo "== What each reads (scripts/matcher.py), the 410 games at each tempo, with each fault model"
for faults in $models; do
    for reply in 40 80 120 200 300; do
        s="$dir/reply-$reply-$faults.script"
        "$bin" bench script --reply-ms "$reply" --faults "$faults" "${games[@]}" > "$s"
        "$bin" replay "$s" > "$s.events"
        "$py" scripts/matcher.py "$s" > "$s.matcher"
        printf '%-13s replies from %3s ms: ' "$faults," "$reply"
        python3 scripts/compare-readers.py "$s" "$s.events" "$s.matcher" > "$s.compare" || status=1
        head -n 1 "$s.compare"
        if [ "$(wc -l < "$s.compare")" -gt 1 ]; then
            echo "  $(($(wc -l < "$s.compare") - 1)) games where chessboardd did worse (in $s.compare)"
        fi
    done
done

# A matcher that loses its place stops finding moves and runs quicker: the time that counts is
# over games it can follow (lifts and placements only, `--plain`); the one with every quirk of
# the boards is shown too.
for kind in plain quirks; do
    s="$dir/200-games-$kind.script"
    flag=$([ "$kind" = plain ] && echo --plain || true)
    "$bin" bench script --reply-ms 40 $flag --games 200 tests/data/games/selfplay-400.pgn > "$s"
    "$bin" replay "$s" > "$s.events"
    "$py" "$matcher" "$s" > "$s.matcher"
    echo "== 200 games at people's tempo (replies from 40 ms), $kind: $(grep -c '' "$s") lines, $runs runs each"
    if [ "$matcher" = scripts/matcher.py ]; then
        python3 scripts/compare-readers.py "$s" "$s.events" "$s.matcher" || true
    fi
    python3 - "$runs" "$bin" "$py" "$matcher" "$s" <<'PY2'
import statistics, subprocess, sys, time
runs, binary, py, matcher, script = int(sys.argv[1]), *sys.argv[2:]
def timed(cmd):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        out.append(time.perf_counter() - t)
    return min(out), statistics.median(out)
engine = timed([binary, "replay", script])
peer = timed([py, matcher, script])
print(f"chessboardd replay: min {engine[0]*1000:.0f} ms, median {engine[1]*1000:.0f} ms")
print(f"{matcher}: min {peer[0]*1000:.0f} ms, median {peer[1]*1000:.0f} ms")
print(f"ratio (matcher / chessboardd, medians): {peer[1]/engine[1]:.1f}x")
PY2
done
exit $status
