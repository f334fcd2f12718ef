#!/usr/bin/env python3
"""How long a move takes from the board to the broadcast's files, through a real Mosquitto.

Starts Mosquitto on a free loopback port, `chessboardd broadcast` into a temporary directory and
`chessboardd run` on the simulated board playing a game; for every move, the time from the
daemon's move event (its --events-json line) to the broadcast's log line that the board's file
has that many plies. Prints p50, p95 and the slowest.

    python3 scripts/bench-mqtt.py [--bin target/release/chessboardd] [--game FILE.pgn] [--speed 10]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
p = argparse.ArgumentParser()
p.add_argument("--bin", default=os.path.join(here, "..", "target", "release", "chessboardd"))
p.add_argument("--game", default=os.path.join(here, "..", "tests", "data", "games", "nepomniachtchi-liren-game1.pgn"))
p.add_argument("--speed", default="10")
p.add_argument("--seconds", type=float, default=25)
a = p.parse_args()

mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
tmp = tempfile.mkdtemp(prefix="chessboardd-bench-mqtt-")
conf = os.path.join(tmp, "mosquitto.conf")
with open(conf, "w") as f:
    f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
url = f"mqtt://127.0.0.1:{port}"
procs = [subprocess.Popen([mosquitto, "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
time.sleep(0.3)
made, arrived = {}, {}


def follow(stream, marker, parse, into):
    for line in stream:
        if marker in line:
            into.setdefault(parse(line), time.monotonic())


bc = subprocess.Popen([a.bin, "broadcast", "--mqtt", url, "--out", os.path.join(tmp, "out")],
                      stderr=subprocess.PIPE, text=True)
procs.append(bc)
threading.Thread(target=follow, daemon=True, args=(
    bc.stderr, "board bench: ", lambda l: int(l.split("board bench: ")[1].split(" ")[0]), arrived)).start()
time.sleep(0.5)
d = subprocess.Popen([a.bin, "run", "--board", f"sim:{a.game}", "--speech", "text", "--speed", a.speed,
                      "--events-json", "--mqtt", url, "--board-id", "bench"],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
procs.append(d)
threading.Thread(target=follow, daemon=True, args=(
    d.stdout, '"type":"move"', lambda l: int(l.split('"ply":')[1].split(",")[0]), made)).start()
time.sleep(a.seconds)
for proc in reversed(procs):
    proc.terminate()
    proc.wait()
shutil.rmtree(tmp, ignore_errors=True)
ms = sorted((arrived[n] - made[n]) * 1000 for n in made if n in arrived)
if not ms:
    raise SystemExit("no move reached the broadcast")
print(f"{len(made)} moves, {len(ms)} in the broadcast's files: from the move to the file "
      f"p50 {statistics.median(ms):.1f} ms, p95 {ms[max(0, int(len(ms) * 0.95) - 1)]:.1f} ms, "
      f"slowest {ms[-1]:.1f} ms")
