#!/usr/bin/env python3
"""bench-mpi-io-levels: the four access levels of the SIOX paper, with and
without vigil, side by side in one run.

    mpi_levels_compare.py VIGIL MPI_IO_LEVELS [ROUNDS] [RANKS]

For each level it runs the workload ROUNDS times without and with
`vigil run` (alternating, so that the machine's noise falls on both alike)
and keeps the best of each: the I/O time the workload measures itself
(write + read phases, MPI_Wtime, slowest rank) and the whole job's wall
time (which also holds vigil's start-up and its joint report at
MPI_Finalize). It prints both and their ratios."""
import json
import os
import subprocess
import sys
import tempfile
import time

vigil, workload = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
# One rank per core by default: oversubscribed ranks make the noise larger
# than what is measured.
ranks = int(sys.argv[4]) if len(sys.argv) > 4 else 2
blocks, block_bytes = 128, 262144  # 64 MiB a phase with 2 ranks

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
env.pop("LD_PRELOAD", None)


def run(level, with_vigil, directory):
    program = [workload, "--level", str(level), "--blocks", str(blocks),
               "--block-bytes", str(block_bytes), "--file", os.path.join(directory, "data")]
    if with_vigil:
        program = [vigil, "run", "--report=json:" + os.path.join(directory, "report-%p.json"),
                   "--"] + program
    start = time.monotonic()
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", str(ranks)] + program, env=env,
                         check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - start
    totals = json.loads(out.strip().splitlines()[-1])
    return totals["write_seconds"] + totals["read_seconds"], wall


print(f"bench-mpi-io-levels: {ranks} ranks, {blocks} blocks of {block_bytes} bytes each, "
      f"best of {rounds} rounds")
print(f"{'level':<34} {'I/O without':>12} {'I/O with':>10} {'ratio':>7}   "
      f"{'job without':>12} {'job with':>10} {'ratio':>7}")
names = ["0 non-collective contiguous", "1 collective contiguous",
         "2 non-collective non-contiguous", "3 collective non-contiguous"]
worst = 0.0
# How far the median run without vigil lies from the best one: a ratio
# closer to 1 than this cannot be told from the machine's noise.
noise = 0.0
with tempfile.TemporaryDirectory() as directory:
    for level in range(4):
        best = {False: [1e9, 1e9], True: [1e9, 1e9]}
        baseline_io = []
        for r in range(rounds):
            for with_vigil in ((False, True) if r % 2 == 0 else (True, False)):
                io, wall = run(level, with_vigil, directory)
                best[with_vigil][0] = min(best[with_vigil][0], io)
                best[with_vigil][1] = min(best[with_vigil][1], wall)
                if not with_vigil:
                    baseline_io.append(io)
        io_ratio = best[True][0] / best[False][0]
        worst = max(worst, io_ratio)
        baseline_io.sort()
        noise = max(noise, baseline_io[len(baseline_io) // 2] / baseline_io[0] - 1)
        print(f"{names[level]:<34} {best[False][0]*1e3:9.1f} ms {best[True][0]*1e3:7.1f} ms "
              f"{io_ratio:6.3f}x   {best[False][1]*1e3:9.1f} ms {best[True][1]*1e3:7.1f} ms "
              f"{best[True][1]/best[False][1]:6.3f}x")
print(f"noise: runs without vigil spread by up to {noise * 100:.1f} % (median against best)")
print(f"goal: <= 1 % added I/O time: {'met' if worst <= 1.01 else 'NOT met'} "
      f"(worst level: {(worst - 1) * 100:+.1f} %"
      f"{', within the noise' if worst - 1 <= noise else ''})")
