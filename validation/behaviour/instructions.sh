#!/usr/bin/env bash
# Instructions per event of the benchmarks, by cachegrind (repeatable whatever the machine's load),
# as docs/PERFORMANCE.md measures them: the whole `run_scenario` example process, scenario loading
# included, B7 shortened to 2 s of simulated time.
#
#   validation/behaviour/instructions.sh [RUN_SCENARIO_BINARY] [B1 B2 ...]
#
# The binary defaults to target/release/examples/run_scenario (build it with
# `cargo build --release --example run_scenario -p fairstream-scenario`). Prints one line per
# benchmark: id, events, instructions, instructions per event.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-target/release/examples/run_scenario}
shift || true
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(B1 B2 B3 B4 B5 B6 B7)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/i19-folders-cg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for b in "${benches[@]}"; do
    src=python/fairstream/scenarios/bench/$b.toml
    scenario=$tmp/$b.toml
    if [ "$b" = B7 ]; then
        sed -E 's/^duration = .*/duration = "2s"/' "$src" >"$scenario"
    else
        cp "$src" "$scenario"
    fi
    out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg.$b" "$bin" "$scenario" 2>"$tmp/err.$b")
    events=$(printf '%s\n' "$out" | sed -nE '1s/^([0-9]+) events.*/\1/p')
    instr=$(sed -nE 's/^summary: ([0-9]+).*/\1/p' "$tmp/cg.$b")
    awk -v b="$b" -v e="$events" -v i="$instr" 'BEGIN { printf "%s %d %.0f %.1f\n", b, e, i, i / e }'
done
