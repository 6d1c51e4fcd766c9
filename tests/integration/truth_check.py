#!/usr/bin/env python3
"""Every counter of vigil's JSON report against the workload's truth.

    truth_check.py posix --io-script PROG --preload LIB --known FILE
    truth_check.py mpi --mpi-script PROG --vigil CLI --known FILE

runs each script of io_scripts.py (io-script under LD_PRELOAD, or
mpi-script on 4 ranks under `vigil run`), derives every counter from the
script by Darshan's definitions (darshan_truth.py) and prints each
disagreement as "SCRIPT FILE COUNTER: vigil X, truth Y".

FILE lists the disagreements known today ("SCRIPT FILE COUNTER" a line, "#"
comments): the counters a branch of issue 33 is still fixing. The test
fails on a disagreement not listed, and on a listed one that agrees (the
fix landed: take it off the list), so the list only shrinks."""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import darshan_truth  # noqa: E402
import io_scripts  # noqa: E402

MPI_RANKS = 4


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("VIGIL_") and k != "LD_PRELOAD"}
    env.update(extra)
    return env


def run_posix(args, name, script, work):
    """Runs one script under the library: (truth, report)."""
    script_path = os.path.join(work, name + ".script")
    with open(script_path, "w") as f:
        f.write(script)
    env = clean_env({"LD_PRELOAD": args.preload,
                     "VIGIL_REPORT": os.path.join(work, "report-%p.json"),
                     "VIGIL_REPORT_FORMAT": "json", "VIGIL_SOCKET": "/nonexistent"})
    r = subprocess.run([args.io_script, script_path, work], env=env, capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("%s: io-script exited %d: %s" % (name, r.returncode, r.stderr))
    with open(os.path.join(work, "report-%d.json" % int(r.stdout))) as f:
        report = json.load(f)
    truth = darshan_truth.posix_truth(script, os.statvfs(work).f_bsize)
    return truth, report


def mpi_env(work):
    return clean_env({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                      "OMPI_MCA_orte_tmpdir_base": work})


def mpirun(work):
    return ["timeout", "-k", "10", "120", "mpirun", "--oversubscribe", "-np", str(MPI_RANKS)]


def run_mpi(args, name, script, work):
    """Runs one script as a 4-rank job under `vigil run`: (truth, joint report)."""
    r = subprocess.run(mpirun(work) + [args.mpi_script, "--amodes"], env=mpi_env(work),
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("mpi-script --amodes exited %d: %s" % (r.returncode, r.stderr))
    amodes = json.loads(r.stdout.strip().splitlines()[-1])
    script_path = os.path.join(work, name + ".script")
    with open(script_path, "w") as f:
        f.write(script)
    cmd = mpirun(work) + [args.vigil, "run", "--report=json:%s/report-%%p.json" % work, "--",
                          args.mpi_script, script_path, work]
    r = subprocess.run(cmd, env=mpi_env(work), capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("%s: the job exited %d: %s" % (name, r.returncode, r.stderr))
    joint = glob.glob(os.path.join(work, "report-*-job.json"))
    if len(joint) != 1:
        sys.exit("%s: %d job reports in %s, not 1" % (name, len(joint), work))
    with open(joint[0]) as f:
        report = json.load(f)
    return darshan_truth.mpiio_truth(script, MPI_RANKS, amodes), report


def disagreements(name, truth, report, work):
    """["SCRIPT FILE COUNTER", shown] of one run."""
    entries = {e["path"]: e for e in report.get("files", [])}
    out = []
    for path in sorted(truth):
        entry = entries.get(os.path.join(work, path))
        if entry is None:
            out.append(("%s %s files" % (name, path), "vigil has no entry for it"))
            continue
        for counter, got, want in darshan_truth.compare(truth[path], entry):
            out.append(("%s %s %s" % (name, path, counter),
                        "vigil %s, truth %s" % (got, want)))
    return out


COUNTERS_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "darshan-counters.md")


def undocumented(found_truth_keys):
    """The counters checked that docs/darshan-counters.md does not name."""
    with open(COUNTERS_DOC) as f:
        named = {line.split("|")[1].strip() for line in f if line.startswith("| ")}
    return sorted(set(found_truth_keys) - named)


def read_known(path):
    with open(path) as f:
        return {line.split("#", 1)[0].strip() for line in f} - {""}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("suite", choices=["posix", "mpi"])
    p.add_argument("--io-script")
    p.add_argument("--preload")
    p.add_argument("--mpi-script")
    p.add_argument("--vigil")
    p.add_argument("--known", required=True)
    p.add_argument("--print-known", action="store_true",
                   help="print every disagreement as a line of the known list, and pass")
    args = p.parse_args()
    known = read_known(args.known)
    scripts = io_scripts.SCRIPTS if args.suite == "posix" else io_scripts.MPI_SCRIPTS
    run = run_posix if args.suite == "posix" else run_mpi
    found, checked = [], set()
    for name, script in scripts.items():
        with tempfile.TemporaryDirectory(prefix="vigil-truth-") as work:
            truth, report = run(args, name, script, work)
            found += disagreements(name, truth, report, work)
            checked |= {k for t in truth.values() for k in t}
    missing_in_doc = undocumented(checked)
    for key in missing_in_doc:
        print("%s: checked, but not in %s" % (key, COUNTERS_DOC))
    if args.print_known:
        for key, shown in found:
            print("%s  # %s" % (key, shown))
        return 0
    seen = {key for key, _ in found}
    ours = {k for k in known if k.split(" ", 1)[0] in scripts}
    unexpected = [(k, s) for k, s in found if k not in known]
    fixed = sorted(ours - seen)
    for key, shown in found:
        print("%s: %s%s" % (key, shown, "" if key in known else "   <- NOT in the known list"))
    for key in fixed:
        print("%s: now agrees: take it off %s" % (key, args.known))
    print("%d disagreements, %d of them known; %d known ones now agree" %
          (len(found), len(found) - len(unexpected), len(fixed)))
    return 1 if unexpected or fixed or missing_in_doc else 0


if __name__ == "__main__":
    sys.exit(main())
