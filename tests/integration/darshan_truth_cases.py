#!/usr/bin/env python3
"""darshan_truth.py on scripts small enough to work out by hand from
Darshan 3.4.7's macros (each case says which rule it pins), and its
comparison on report entries made up to break each rule: the yardstick of
the truth test is itself checked, whether or not Darshan is installed."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import darshan_truth as dt  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


# DARSHAN_BUCKET_INC: upper bounds included.
for size, b in [(0, 0), (100, 0), (101, 1), (1024, 1), (1025, 2), (10240, 2), (10241, 3),
                (1048576, 4), (1048577, 5), (4194304, 5), (1073741824, 8), (1073741825, 9)]:
    check("size_bin(%d)" % size, dt.size_bin(size), b)

# POSIX_RECORD_WRITE: the first write at 0 is neither sequential nor
# consecutive (last byte starts at 0); a write at 1 after nothing is
# consecutive; a backward jump has stride 0; a forward gap has the stride
# from the last byte.
t = dt.posix_truth("0 open 0 f wct 0600\n0 pwrite 0 0 10 0\n0 pwrite 0 10 10 0\n"
                   "0 pwrite 0 100 10 3\n0 pwrite 0 0 10 0\n0 pwrite 0 200 100 0\n", 4096)["f"]
check("seq_writes", t["posix.seq_writes"], 3)
check("consec_writes", t["posix.consec_writes"], 1)
check("strides", dict(t["posix.common_strides"].freq), {0: 3, 80: 1, 190: 1})
check("stride list", t["posix.common_strides"].darshan_list(), [(190, 1), (80, 1)])
check("max_written_offset", t["posix.max_written_offset"], 299)
check("max_read_offset (none)", t["posix.max_read_offset"], 0)
check("mem_not_aligned", t["posix.mem_not_aligned"], 1)
check("file_not_aligned", t["posix.file_not_aligned"], 3)
check("mode", t["posix.mode"], 0o600)
t = dt.posix_truth("0 open 0 g wct 0600\n0 pwrite 0 1 10 0\n", 4096)["g"]
check("consec from byte 0", (t["posix.seq_writes"], t["posix.consec_writes"]), (1, 1))

# Switches per file; dup and fileno are opens that do not reset the
# offsets; a reopen does; fsync and fdatasync apart.
t = dt.posix_truth("0 open 0 f bct 0644\n0 write 0 10 0\n0 read 0 10 0\n0 dup 0 1\n"
                   "0 write 1 10 0\n0 fdatasync 1\n0 fsync 0\n0 close 1\n0 close 0\n"
                   "0 open 0 f r\n0 read 0 10 0\n0 close 0\n", 4096)["f"]
check("rw_switches (a reopen keeps the last kind)", t["posix.rw_switches"], 3)
check("opens", (t["posix.opens"], t["posix.dups"]), (3, 1))
check("syncs", (t["posix.fsyncs"], t["posix.fdatasyncs"]), (1, 1))
check("consec_reads", t["posix.consec_reads"], 0)  # the first read at 10 after write 0..9
check("seq_reads after reopen", t["posix.seq_reads"], 1)

# darshan_track_common_val_counters: only the first 32 distinct values are
# counted; DARSHAN_UPDATE_COMMON_VAL_COUNTERS: ties by the larger value,
# value 0 never listed.
c = dt.Common()
for v in list(range(1, 33)) + [99] * 5 + [7, 3, 3]:
    c.add(v)
check("untracked newcomer", c.darshan_list(), [(3, 3), (7, 2), (32, 1), (31, 1)])
c = dt.Common()
for v in [0, 0, 0, 5]:
    c.add(v)
check("zero not listed", c.darshan_list(), [(5, 1)])

# The comparison: counts above the truth, a wrong "exact", stride 0, and a
# wrong top 4 where the file had few values are each reported.
truth = {"posix.common_sizes": dt.Common({10: 3, 20: 1}, [10, 20])}
ok = {"posix": {"common_sizes": [{"size": 10, "count": 3, "exact": True},
                                 {"size": 20, "count": 1, "exact": True}]}}
check("agreeing table", dt.compare(truth, ok), [])
for bad in ([{"size": 10, "count": 4, "exact": False}],
            [{"size": 10, "count": 2, "exact": True}],
            [{"size": 0, "count": 1, "exact": True}],
            [{"size": 20, "count": 1, "exact": True}, {"size": 10, "count": 3, "exact": True}],
            [{"size": 10, "count": 3}]):
    got = dt.compare(truth, {"posix": {"common_sizes": bad}})
    check("bad table %r reported" % bad, len(got), 1)
check("missing member", dt.compare({"posix.dups": 0}, {"posix": {}}),
      [("posix.dups", "missing", "0")])
check("slowest size", dt.compare({"posix.max_read_time_size": dt.OneOf(frozenset({4, 8}))},
                                 {"posix": {"max_read_time_size": 8}}), [])

# MPIIO_RECORD_OPEN / _WRITE: a one-rank communicator is an independent
# open, an info object a hint, the amode the mode; sizes per rank summed.
t = dt.mpiio_truth("* open 0 s wc world k=v\n* write_at_all 0 0+100r 100\n* read_at 0 0 50\n"
                   "0 open 1 a wc self -\n0 write 1 5\n", 4, {"r": 2, "w": 4, "b": 8, "c": 1})
check("coll_opens", t["s"]["mpiio.coll_opens"], 4)
check("hints", t["s"]["mpiio.hints"], 4)
check("rw_switches", t["s"]["mpiio.rw_switches"], 4)
check("hist", t["s"]["mpiio.write_size_hist"], [4] + [0] * 9)
check("indep_opens", (t["a"]["mpiio.indep_opens"], t["a"]["mpiio.mode"]), (1, 5))

for f in failures:
    print(f)
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
