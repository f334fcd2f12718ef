#!/bin/bash
# Runs every test of `cargo test --all-targets`, three test programs at a time: most of the slow
# ones wait on simulated boards, pseudo-terminals and timers rather than on the processor, so a
# two-core machine runs them side by side in a third of the time. The slowest start first. Each
# program's output goes to target/test-logs/NAME.log; target/test.log holds them all, in order.
# Usage: scripts/test.sh   (CARGO may name another cargo)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
logs=target/test-logs
rm -rf "$logs"
mkdir -p "$logs"

# Build every test program; the JSON lines name each one's executable.
"$cargo" test --all-targets --no-run --message-format=json-render-diagnostics \
    >"$logs/build.json"
grep '"profile":{[^}]*"test":true' "$logs/build.json" |
    grep -o '"executable":"[^"]*"' | sed 's/"executable":"//; s/"$//' >"$logs/programs"

# The slowest first (measured on a two-core machine), then the rest as cargo listed them; the
# property tests, the longest, keep both cores busy and go with the rest, after the programs
# that run daemons in real time (a daemon starved of the processor tests something else).
slow="boards crash gpio simulate_host mqtt journal control state_lock tempo"
{
    for name in $slow; do grep "/deps/${name}-[0-9a-f]*$" "$logs/programs" || true; done
    grep -v -E "/deps/($(echo $slow | tr ' ' '|'))-[0-9a-f]*$" "$logs/programs"
} >"$logs/order"

run_one() {
    local exe=$1 name
    name=$(basename "$exe")
    if "$exe" >"target/test-logs/$name.log" 2>&1; then
        echo "ok      $name"
    else
        echo "FAILED  $name (see target/test-logs/$name.log)"
        return 1
    fi
}
export -f run_one
status=0
xargs -P 3 -I{} bash -c 'run_one "$@"' _ {} <"$logs/order" || status=1

# All the output, program by program, in the order they were started.
: >target/test.log
while read -r exe; do
    name=$(basename "$exe")
    echo "     Running $name" >>target/test.log
    cat "$logs/$name.log" >>target/test.log
done <"$logs/order"
if [ "$status" -ne 0 ]; then
    grep -h -E "^(---- |test .* FAILED|failures:)" "$logs"/*.log | head -40 >&2 || true
fi
exit "$status"
