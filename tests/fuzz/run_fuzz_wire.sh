#!/bin/sh
# run_fuzz_wire.sh SEEDS_EXE FUZZ_EXE RUNS
# A bounded, reproducible fuzzing campaign for the wire decoder: a fresh
# corpus from the seed program, a fixed seed, a fixed number of runs.
set -eu

if [ "$#" -ne 3 ]; then
    echo "usage: $0 SEEDS_EXE FUZZ_EXE RUNS" >&2
    exit 2
fi
seeds_exe=$1
fuzz_exe=$2
runs=$3

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT

"$seeds_exe" "$corpus"

status=0
"$fuzz_exe" -runs="$runs" -seed=1 -max_len=4096 "$corpus" || status=$?
exit "$status"
