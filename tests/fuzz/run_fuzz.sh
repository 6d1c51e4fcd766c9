#!/bin/sh
# run_fuzz.sh SEEDS_EXE FUZZ_EXE RUNS MAX_LEN
# A bounded fuzzing campaign: a fresh corpus from the seed program, a fixed
# seed, a fixed number of runs, inputs up to MAX_LEN bytes. Runs still
# differ a little (the order libFuzzer reads its corpus in), so a finding
# may show once and not again: the log prints its input, bytes and base64.
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
# libFuzzer's own exit code for a finding is 77, which meson reads as a
# skip: a finding must fail the test.
"$fuzz_exe" -runs="$runs" -seed=1 -max_len="$max_len" -error_exitcode=1 "$corpus" || status=$?
exit "$status"
