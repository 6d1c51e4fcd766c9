#!/usr/bin/env python3
"""vigil's file counters beside Darshan 3.4.7's, counter by counter, on the
same workloads: the truth test's scripts (tests/integration/io_scripts.py,
with the truth derived from each script beside them), and `cp`, `tar cf`
and `sort` of a generated file.

    darshan_compare.py --preload LIB --io-script PROG [--mpi-script PROG --vigil CLI]
                       [--darshan PREFIX]

Prints per workload and file a line per counter of docs/darshan-counters.md:
vigil's value, Darshan's, the truth's (for a script), and "!" where they
disagree. Darshan is looked for in PREFIX (/opt/darshan-3.4.7): where it is
not installed its column is skipped with a message saying so."""

import argparse
import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import darshan_truth  # noqa: E402
import io_scripts  # noqa: E402

COUNTERS_DOC = os.path.join(HERE, "..", "docs", "darshan-counters.md")
MPI_RANKS = 4


def counter_table():
    """[(vigil member, Darshan counter)] of docs/darshan-counters.md."""
    rows = []
    with open(COUNTERS_DOC) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 4 and re.match(r"^(posix|stdio|mpiio)\.", cells[0]):
                rows.append((cells[0], cells[2]))
    if not rows:
        sys.exit("darshan_compare: no counter table in %s" % COUNTERS_DOC)
    return rows


def darshan_value(counters, name):
    """A vigil-shaped value from Darshan's counters of one file: a list for
    the 10 size bins, [(value, count)] for ACCESS/STRIDE, else the number."""
    first = name.split(" ")[0]
    if "_SIZE_" in first:  # POSIX_SIZE_READ_0_100 …: the 10 bins in order
        prefix = first[:-len("0_100")]
        bins = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
                "10M_100M", "100M_1G", "1G_PLUS"]
        got = [counters.get(prefix + b) for b in bins]
        return None if None in got else [int(v) for v in got]
    m = re.match(r"^(\w+?)1_(ACCESS|STRIDE)$", first)
    if m:
        out = []
        for i in range(1, 5):
            value = counters.get("%s%d_%s" % (m.group(1), i, m.group(2)))
            count = counters.get("%s%d_COUNT" % (m.group(1), i))
            if value is not None and count is not None and int(count) > 0:
                out.append((int(value), int(count)))
        return out if ("%s1_COUNT" % m.group(1)) in counters else None
    v = counters.get(first)
    if v is None:
        return None
    return float(v) if "_F_" in first else int(float(v))


def vigil_value(entry, member):
    node = entry
    for part in member.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if isinstance(node, list) and node and isinstance(node[0], dict):
        key = "stride" if member.endswith("strides") else "size"
        return [(e.get(key), e.get("count")) for e in node]
    return node


def truth_value(truth, member):
    if truth is None or member not in truth:
        return None
    t = truth[member]
    if isinstance(t, darshan_truth.Common):
        return t.darshan_list()
    if isinstance(t, darshan_truth.OneOf):
        return sorted(t.sizes) if t.sizes else 0
    return t


def agree(a, b):
    if a is None or b is None:
        return True
    if isinstance(b, list) and a in b and not isinstance(a, list):
        return True  # the slowest call's size: one of the truth's
    if isinstance(a, float) or isinstance(b, float):
        return True  # times: shown, not compared
    return a == b


def parse_darshan(log, parser):
    """{path: {counter: value}} of darshan-parser's output."""
    out = subprocess.run([parser, log], capture_output=True, text=True, check=True).stdout
    files = {}
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) >= 6:
            files.setdefault(cells[5], {})[cells[3]] = cells[4]
    return files


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VIGIL_", "DARSHAN_")) and k != "LD_PRELOAD"}
    env.update(extra)
    return env


def run_vigil(args, argv, work, cwd):
    env = clean_env({"LD_PRELOAD": args.preload, "VIGIL_SOCKET": "/nonexistent",
                     "VIGIL_REPORT": os.path.join(work, "vigil-%p.json"),
                     "VIGIL_REPORT_FORMAT": "json"})
    before = set(glob.glob(os.path.join(work, "vigil-*.json")))
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    files = {}
    for path in sorted(set(glob.glob(os.path.join(work, "vigil-*.json"))) - before):
        with open(path) as f:
            for e in json.load(f).get("files", []):
                files[e["path"]] = e
    return files


def run_darshan(args, argv, work, cwd, name):
    if args.darshan_missing:
        return {}
    log = os.path.join(work, name + ".darshan")
    env = clean_env({"LD_PRELOAD": args.libdarshan, "DARSHAN_ENABLE_NONMPI": "1",
                     "DARSHAN_LOGFILE": log})
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return parse_darshan(log, args.parser)


def mpi_prefix(work, env_names):
    out = ["timeout", "-k", "10", "300", "mpirun", "--oversubscribe", "-np", str(MPI_RANKS)]
    for n in env_names:
        out += ["-x", n]
    return out


def mpi_env(work, extra):
    return clean_env(dict({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                           "OMPI_MCA_orte_tmpdir_base": work}, **extra))


# Counters shown, and the disagreements between each pair, over the run.
TALLY = {"counters": 0, "vigil/darshan": 0, "vigil/truth": 0, "darshan/truth": 0,
         "vigil lacks": 0}


def print_side_by_side(workload, table, vigil, darshan, truth, root):
    paths = sorted(set(vigil) | set(darshan) | set(truth or {}))
    shown_any = False
    for path in paths:
        if not path.startswith(root + "/"):
            continue
        rel = path[len(root) + 1:]
        t = (truth or {}).get(rel)
        entry = vigil.get(path, {})
        d = darshan.get(path, {})
        lines = []
        for member, dname in table:
            v = vigil_value(entry, member)
            dv = darshan_value(d, dname) if d else None
            tv = truth_value(t, member)
            if v is None and dv is None and tv is None:
                continue
            pairs = {"vigil/darshan": agree(v, dv), "vigil/truth": agree(v, tv),
                     "darshan/truth": agree(dv, tv)}
            TALLY["counters"] += 1
            TALLY["vigil lacks"] += 1 if v is None and (dv is not None or tv is not None) else 0
            for pair, same in pairs.items():
                TALLY[pair] += 0 if same else 1
            mark = "" if all(pairs.values()) else "!"
            lines.append("  %-1s %-28s %-24s %-24s %s" % (mark, member, v, dv, tv))
        if lines:
            shown_any = True
            print("%s %s" % (workload, rel))
            print("    %-28s %-24s %-24s %s" % ("counter", "vigil", "darshan", "truth"))
            print("\n".join(lines))
    if not shown_any:
        print("%s: no files under %s" % (workload, root))


def generated_text(path, lines=200000, seed=33):
    rng = random.Random(seed)
    words = ["io", "vigil", "darshan", "posix", "stdio", "mpi", "stride", "offset", "bin"]
    with open(path, "w") as f:
        for _ in range(lines):
            f.write(" ".join(rng.choice(words) for _ in range(6)) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preload", required=True)
    p.add_argument("--io-script", required=True)
    p.add_argument("--mpi-script")
    p.add_argument("--vigil")
    p.add_argument("--darshan", default="/opt/darshan-3.4.7")
    args = p.parse_args()
    for name in ("preload", "io_script", "mpi_script", "vigil"):
        if getattr(args, name):  # the runs' working directories are their own
            setattr(args, name, os.path.abspath(getattr(args, name)))
    args.libdarshan = os.path.join(args.darshan, "lib", "libdarshan.so")
    args.parser = os.path.join(args.darshan, "bin", "darshan-parser")
    args.darshan_missing = not (os.path.exists(args.libdarshan) and os.access(args.parser, os.X_OK))
    if args.darshan_missing:
        print("darshan: not installed in %s (no lib/libdarshan.so or bin/darshan-parser): its "
              "column is empty" % args.darshan)
    table = counter_table()
    print("columns: vigil, Darshan 3.4.7, truth (scripts only); ! where two disagree\n")

    for name, script in io_scripts.SCRIPTS.items():
        with tempfile.TemporaryDirectory(prefix="vigil-darshan-") as work:
            files_dir = os.path.join(work, "files")
            os.mkdir(files_dir)
            script_path = os.path.join(work, name + ".script")
            with open(script_path, "w") as f:
                f.write(script)
            argv = [args.io_script, script_path, files_dir]
            vigil = run_vigil(args, argv, work, work)
            darshan = run_darshan(args, argv, work, work, name)
            truth = darshan_truth.posix_truth(script, os.statvfs(files_dir).f_bsize)
            print_side_by_side(name, table, vigil, darshan, truth, files_dir)

    with tempfile.TemporaryDirectory(prefix="vigil-darshan-") as work:
        files_dir = os.path.join(work, "files")
        os.mkdir(files_dir)
        generated_text(os.path.join(files_dir, "input.txt"))
        tools = {"cp": ["cp", "input.txt", "copy.txt"],
                 "tar": ["tar", "cf", "input.tar", "input.txt"],
                 "sort": ["sort", "--parallel=2", "-S", "1M", "-o", "sorted.txt", "input.txt"]}
        for name, argv in tools.items():
            vigil = run_vigil(args, argv, work, files_dir)
            darshan = run_darshan(args, argv, work, files_dir, name)
            print_side_by_side(name, table, vigil, darshan, None, files_dir)

    if args.mpi_script and args.vigil:
        for name, script in io_scripts.MPI_SCRIPTS.items():
            with tempfile.TemporaryDirectory(prefix="vigil-darshan-") as work:
                files_dir = os.path.join(work, "files")
                os.mkdir(files_dir)
                script_path = os.path.join(work, name + ".script")
                with open(script_path, "w") as f:
                    f.write(script)
                amodes = json.loads(subprocess.run(
                    mpi_prefix(work, []) + [args.mpi_script, "--amodes"], env=mpi_env(work, {}),
                    capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
                prog = [args.mpi_script, script_path, files_dir]
                subprocess.run(mpi_prefix(work, []) + [args.vigil, "run",
                                                       "--report=json:%s/vigil-%%p.json" % work,
                                                       "--"] + prog,
                               env=mpi_env(work, {}), check=True, capture_output=True)
                vigil = {}
                for path in glob.glob(os.path.join(work, "vigil-*-job.json")):
                    with open(path) as f:
                        vigil = {e["path"]: e for e in json.load(f).get("files", [])}
                darshan = {}
                if not args.darshan_missing:
                    log = os.path.join(work, name + ".darshan")
                    extra = {"LD_PRELOAD": args.libdarshan, "DARSHAN_LOGFILE": log,
                             "DARSHAN_LOGHINTS": "cb_nodes=1"}
                    subprocess.run(mpi_prefix(work, list(extra)) + prog,
                                   env=mpi_env(work, extra), check=True, capture_output=True)
                    darshan = parse_darshan(log, args.parser)
                truth = darshan_truth.mpiio_truth(script, MPI_RANKS, amodes)
                mpi_table = [(m, d) for m, d in table if m.startswith("mpiio.")]
                print_side_by_side(name, mpi_table, vigil, darshan, truth, files_dir)
    print("\n%d counters shown; disagreements: vigil/Darshan %d, vigil/truth %d, "
          "Darshan/truth %d; vigil lacks %d (times are shown, not compared)" %
          (TALLY["counters"], TALLY["vigil/darshan"], TALLY["vigil/truth"],
           TALLY["darshan/truth"], TALLY["vigil lacks"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
