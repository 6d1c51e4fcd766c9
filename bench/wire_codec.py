#!/usr/bin/env python3
"""core/wire.c's cost per item, side by side for several builds of
bench-wire-codec (bench/wire_codec.c), in the same run.

    wire_codec.py NAME=BENCH_BIN [NAME=BENCH_BIN ...] [--runs N]

Each build's ns per item is the best over N runs (default 3) of its own
best of 50 passes, the builds taking turns so that the machine's load falls
on all alike. Then, where valgrind is installed, each phase of each build
runs once under callgrind, counting only inside bench_measured: the
instructions per item, which the machine's load does not change.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def timings(binary):
    """{phase: (items, ns per item)} of one run."""
    out = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines()[1:]:
        name, items, ns = line.split()
        rows[name] = (int(items), float(ns))
    return rows


def instructions(binary, phase, items):
    """Instructions per item of one measured pass of the phase."""
    with tempfile.TemporaryDirectory(prefix="wire-codec-") as d:
        out = os.path.join(d, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                        "--collect-atstart=no", "--toggle-collect=bench_measured",
                        binary, "--phase", phase],
                       check=True, capture_output=True, text=True)
        with open(out) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1]) / items
    raise RuntimeError("no instruction count from callgrind for " + phase)


def main(argv):
    runs = 3
    builds = []
    args = iter(argv)
    for a in args:
        if a == "--runs":
            runs = int(next(args))
        else:
            name, _, path = a.partition("=")
            builds.append((name, path))
    if not builds:
        sys.exit(__doc__)
    best = {name: {} for name, _ in builds}
    for _ in range(runs):
        for name, path in builds:
            for phase, (items, ns) in timings(path).items():
                old = best[name].get(phase)
                best[name][phase] = (items, ns if old is None else min(old[1], ns))
    phases = list(best[builds[0][0]])
    counted = shutil.which("valgrind") is not None
    print("core/wire.c per item: ns (best of %d runs of 50 passes)%s" %
          (runs, ", instructions (callgrind)" if counted else "; no valgrind: no instructions"))
    header = "%-16s %6s" % ("phase", "items")
    for name, _ in builds:
        header += "  %10s" % ("ns " + name)
    if counted:
        for name, _ in builds:
            header += "  %12s" % ("instr " + name)
    print(header)
    for phase in phases:
        items = best[builds[0][0]][phase][0]
        row = "%-16s %6d" % (phase, items)
        for name, _ in builds:
            row += "  %10.1f" % best[name][phase][1]
        if counted:
            for name, path in builds:
                row += "  %12.1f" % instructions(path, phase, items)
        print(row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
