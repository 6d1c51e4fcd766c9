#!/bin/sh
# run_fuzz.sh SEEDS_EXE FUZZ_EXE RUNS MAX_LEN
# A bounded, reproducible fuzzing campaign: a fresh corpus from the seed
# program, a fixed seed, a fixed number of runs, inputs up to MAX_LEN bytes.
set -eu

if [ "$#" -ne 4 ]; then
    echo "usage: $0 SEEDS_EXE FUZZ_EXE RUNS MAX_LEN" >&2
    exit 2
fi
seeds_exe=$1
fuzz_exe=$2
runs=$3
max_len=$4

# UBSan only prints and goes on unless told otherwise: any finding fails.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export UBSAN_OPTIONS

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT

"$seeds_exe" "$corpus"

status=0
"$fuzz_exe" -runs="$runs" -seed=1 -max_len="$max_len" "$corpus" || status=$?
exit "$status"
