"""The counters a script of io-script (io_script.c) or mpi-script
(tests/mpi/mpi_script.c) must give, derived from the script alone by Darshan
3.4.7's definitions, never from vigil's code; and the comparison of a vigil
JSON report's file entry with them.

Each rule cites the Darshan function or macro it follows
(darshan-runtime/lib/). Where the spec of issue 33 departs from Darshan, the
spec's convention is taken and said so (docs/darshan-counters.md).

A file's truth is a flat dict "layer.member" -> value, value being an int, a
list (histograms), a Common (the common sizes and strides tables), or a
OneOf (the size of the slowest call: time is no part of the truth, so any
size of that kind of call the script made).
"""

import dataclasses

# DARSHAN_BUCKET_INC (darshan-common.h): a size lands in the first bin whose
# upper bound it does not exceed (< 101, < 1025, …): upper bound included.
SIZE_BIN_UPPER = [100, 1024, 10240, 102400, 1048576, 4194304, 10485760,
                  104857600, 1073741824]

# darshan_track_common_val_counters (darshan-common.c): the first 32
# distinct values of a file are counted exactly; later newcomers never.
DARSHAN_TRACKED_VALUES = 32
# __DARSHAN_MEM_ALIGNMENT (configure.ac): the buffer alignment checked.
DARSHAN_MEM_ALIGNMENT = 8
# vigil's common tables keep 8 values (issue 33): with at most that many
# distinct values in a file, its top 4 must be exact.
VIGIL_EXACT_WITHIN = 8
COMMON_LISTED = 4


def size_bin(size):
    for i, upper in enumerate(SIZE_BIN_UPPER):
        if size <= upper:
            return i
    return len(SIZE_BIN_UPPER)


@dataclasses.dataclass
class Common:
    """A common-values table: every value's exact count, and the values
    in the order Darshan met them (for its 32-value limit)."""
    freq: dict = dataclasses.field(default_factory=dict)
    first_seen: list = dataclasses.field(default_factory=list)

    def add(self, value):
        if value not in self.freq:
            self.freq[value] = 0
            self.first_seen.append(value)
        self.freq[value] += 1

    def merged(self, other):
        out = Common(dict(self.freq), list(self.first_seen))
        for v in other.first_seen:
            if v not in out.freq:
                out.first_seen.append(v)
                out.freq[v] = 0
            out.freq[v] += other.freq[v]
        return out

    def darshan_list(self):
        """DARSHAN_UPDATE_COMMON_VAL_COUNTERS (darshan-common.h): value 0 is
        never listed ("if(*(int64_t *)__vals == 0) break"); the 4 kept are
        the highest counts, ties by the larger value; only tracked values."""
        tracked = self.first_seen[:DARSHAN_TRACKED_VALUES]
        ranked = sorted((v for v in tracked if v != 0),
                        key=lambda v: (-self.freq[v], -v))
        return [(v, self.freq[v]) for v in ranked[:COMMON_LISTED]]

    def __str__(self):
        return str(self.darshan_list())


@dataclasses.dataclass
class OneOf:
    """The size of the slowest call: one of these (0 when there was none)."""
    sizes: frozenset

    def __str__(self):
        return "one of %s" % sorted(self.sizes) if self.sizes else "0"


class _Layer:
    """One file's record in one layer, as Darshan's record ref keeps it:
    its counters and the access state (offset, last bytes, last kind)."""

    def __init__(self):
        self.c = {k: 0 for k in COUNT_MEMBERS}
        self.c["mode"] = -1  # spec: -1 unknown (Darshan: 0)
        self.c["max_read_offset"] = 0   # spec: 0 when none (Darshan's)
        self.c["max_written_offset"] = 0
        self.hist = {"read": [0] * 10, "write": [0] * 10}
        self.sizes, self.strides = Common(), Common()
        self.slowest = {"read": set(), "write": set()}
        self.offset = 0
        self.last_byte = {"read": 0, "write": 0}
        self.last_kind = None

    def reopen(self):
        # _POSIX_RECORD_OPEN with __reset_flag (a real open, not dup or
        # fileno); _STDIO_RECORD_OPEN resets the offset the same way.
        self.offset = 0
        self.last_byte = {"read": 0, "write": 0}

    def access(self, kind, offset, size, buffer_offset, posix_rules):
        """POSIX_RECORD_READ / POSIX_RECORD_WRITE (darshan-posix.c); for
        stdio STDIO_RECORD_READ / _WRITE (darshan-stdio.c), whose offset is
        the stream's, with vigil's layer members computed by the POSIX
        rules and the spec's 0 where Darshan's stdio has no counterpart."""
        if offset is None:
            offset = self.offset
        last = self.last_byte[kind]
        c = self.c
        plural = kind + "s"
        if offset > last:
            c["seq_" + plural] += 1
        if offset == last + 1:
            c["consec_" + plural] += 1
        # A stride only forward of the last byte, and not from the record's
        # start (last 0): never negative; a backward jump is stride 0.
        stride = offset - last - 1 if (offset > 0 and offset > last and last != 0) else 0
        self.last_byte[kind] = offset + size - 1
        self.offset = offset + size
        end_key = "max_read_offset" if kind == "read" else "max_written_offset"
        c[end_key] = max(c[end_key], offset + size - 1)
        c["read_bytes" if kind == "read" else "written_bytes"] += size
        c[plural] += 1
        self.hist[kind][size_bin(size)] += 1
        self.sizes.add(size)
        self.strides.add(stride)
        if posix_rules:
            if buffer_offset % DARSHAN_MEM_ALIGNMENT != 0:
                c["mem_not_aligned"] += 1
            if c["file_alignment_bytes"] > 0 and offset % c["file_alignment_bytes"] != 0:
                c["file_not_aligned"] += 1
            if self.last_kind is not None and self.last_kind != kind:
                c["rw_switches"] += 1
            self.slowest[kind].add(size)
        self.last_kind = kind

    def truth(self, layer):
        out = {"%s.%s" % (layer, k): v for k, v in self.c.items()}
        out[layer + ".read_size_hist"] = self.hist["read"]
        out[layer + ".write_size_hist"] = self.hist["write"]
        out[layer + ".common_sizes"] = self.sizes
        out[layer + ".common_strides"] = self.strides
        for kind in ("read", "write"):
            out["%s.max_%s_time_size" % (layer, kind)] = OneOf(frozenset(self.slowest[kind]))
        return out


COUNT_MEMBERS = [
    "reads", "writes", "opens", "seeks", "stats", "fsyncs", "read_bytes", "written_bytes",
    "seq_reads", "seq_writes", "consec_reads", "consec_writes", "rw_switches", "fdatasyncs",
    "filenos", "dups", "file_alignment_bytes", "file_not_aligned", "mem_alignment_bytes",
    "mem_not_aligned",
]


def parse(text):
    """A script's lines: (who, call, args), comments and blanks dropped."""
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            out.append((words[0], words[1], words[2:]))
    return out


def posix_truth(script, file_alignment):
    """{path: truth} of an io-script script. file_alignment: the block size
    of the file system the files are on (Darshan's POSIX_FILE_ALIGNMENT is
    statfs's f_bsize, darshan-core.c), part of the environment's truth."""
    posix, stdio = {}, {}
    fd_file, stream_file = {}, {}

    def record(table, path, posix_rules):
        if path not in table:
            table[path] = _Layer()
            if posix_rules:
                table[path].c["file_alignment_bytes"] = file_alignment
                table[path].c["mem_alignment_bytes"] = DARSHAN_MEM_ALIGNMENT
        return table[path]

    for _, call, a in parse(script):
        if call == "open":
            r = record(posix, a[1], True)
            r.reopen()
            r.c["opens"] += 1
            # POSIX_RECORD_OPEN: the mode argument (only with O_CREAT),
            # kept when nonzero.
            if "c" in a[2] and int(a[3], 8) != 0:
                r.c["mode"] = int(a[3], 8)
            fd_file[a[0]] = a[1]
        elif call in ("write", "read"):
            posix[fd_file[a[0]]].access(call, None, int(a[1]), int(a[2]), True)
        elif call in ("pwrite", "pread"):
            posix[fd_file[a[0]]].access(call[1:], int(a[1]), int(a[2]), int(a[3]), True)
        elif call == "lseek":
            r = posix[fd_file[a[0]]]
            r.offset = int(a[1])
            r.c["seeks"] += 1
        elif call == "fsync":
            posix[fd_file[a[0]]].c["fsyncs"] += 1
        elif call == "fdatasync":  # POSIX_FDSYNCS, apart from POSIX_FSYNCS
            posix[fd_file[a[0]]].c["fdatasyncs"] += 1
        elif call == "dup":  # POSIX_RECORD_REFOPEN(…, POSIX_DUPS): an open too
            r = posix[fd_file[a[0]]]
            r.c["opens"] += 1
            r.c["dups"] += 1
            fd_file[a[1]] = fd_file[a[0]]
        elif call == "close":
            fd_file.pop(a[0])
        elif call == "stat":  # POSIX_LOOKUP_RECORD_STAT
            record(posix, a[0], True).c["stats"] += 1
        elif call == "fopen":
            r = record(stdio, a[1], False)
            r.reopen()
            r.c["opens"] += 1
            stream_file[a[0]] = a[1]
        elif call in ("fwrite", "fread"):
            stdio[stream_file[a[0]]].access(call[1:], None, int(a[1]), int(a[2]), False)
        elif call == "fseek":  # the stream's offset is ftell's after it
            r = stdio[stream_file[a[0]]]
            r.offset = int(a[1])
            r.c["seeks"] += 1
        elif call == "fflush":  # STDIO_FLUSHES: the spec's stdio "fsyncs"
            stdio[stream_file[a[0]]].c["fsyncs"] += 1
        elif call == "fileno":
            # darshan-posix.c's fileno: the stream's file gets a POSIX
            # record, an open and POSIX_FILENOS, no reset of its offsets.
            path = stream_file[a[0]]
            r = record(posix, path, True)
            r.c["opens"] += 1
            r.c["filenos"] += 1
            fd_file[a[1]] = path
        elif call == "fclose":
            stream_file.pop(a[0])
        else:
            raise ValueError("unknown call %r" % call)

    files = {}
    for path in set(posix) | set(stdio):
        t = {}
        if path in posix:
            t.update(posix[path].truth("posix"))
        if path in stdio:
            t.update(stdio[path].truth("stdio"))
        files[path] = t
    return files


class _MpiioRecord:
    """A rank's MPI-IO record of a file (darshan-mpiio.c)."""

    def __init__(self):
        self.c = {k: 0 for k in ("indep_opens", "coll_opens", "indep_reads", "indep_writes",
                                 "coll_reads", "coll_writes", "split_reads", "split_writes",
                                 "nb_reads", "nb_writes", "read_bytes", "written_bytes",
                                 "syncs", "hints", "views", "rw_switches")}
        self.c["mode"] = -1
        self.hist = {"read": [0] * 10, "write": [0] * 10}
        self.sizes = Common()
        self.slowest = {"read": set(), "write": set()}
        self.last_kind = None


def _rank_offset(text, rank):
    base, _, step = text.partition("+")
    return int(base) + (int(step[:-1]) * rank if step else 0)


def mpiio_truth(script, ranks, amodes):
    """{path: truth} of an mpi-script script run on `ranks` ranks, for the
    job's joint report: per the spec, counts summed over the ranks, mode as
    rank 0's, the slowest call's size any rank's, common sizes merged.
    amodes: the MPI's constants (mpi-script --amodes)."""
    per_rank = [dict() for _ in range(ranks)]
    for rank in range(ranks):
        handles = {}
        for who, call, a in parse(script):
            if who != "*" and int(who) != rank:
                continue
            if call == "open":
                r = per_rank[rank].setdefault(a[1], _MpiioRecord())
                # MPIIO_RECORD_OPEN: MPIIO_MODE = amode; a communicator of
                # one rank is an independent open; any info object a hint.
                r.c["mode"] = sum(amodes[ch] for ch in a[2])
                comm_size = 1 if a[3] == "self" else ranks
                r.c["indep_opens" if comm_size == 1 else "coll_opens"] += 1
                if a[4] != "-":
                    r.c["hints"] += 1
                handles[a[0]] = r
                continue
            r = handles[a[0]]
            if call == "sync":
                r.c["syncs"] += 1
            elif call == "set_view":  # MPI_File_set_view: VIEWS (+ HINTS with info)
                r.c["views"] += 1
            elif call in ("close", "seek"):
                pass
            else:
                kind = "read" if call.startswith("read") else "write"
                size = int(a[-1])
                # MPIIO_RECORD_READ / _WRITE: size = count × type size.
                r.hist[kind][size_bin(size)] += 1
                r.sizes.add(size)
                r.c[kind + "_bytes" if kind == "read" else "written_bytes"] += size
                mode = "coll" if call.endswith("_all") else "indep"
                r.c["%s_%ss" % (mode, kind)] += 1
                if r.last_kind is not None and r.last_kind != kind:
                    r.c["rw_switches"] += 1
                r.last_kind = kind
                r.slowest[kind].add(size)

    files = {}
    for path in {p for records in per_rank for p in records}:
        records = [per_rank[rank][path] for rank in range(ranks) if path in per_rank[rank]]
        t = {}
        for k in records[0].c:
            if k == "mode":
                t["mpiio.mode"] = records[0].c["mode"]
            else:
                t["mpiio." + k] = sum(r.c[k] for r in records)
        for kind in ("read", "write"):
            t["mpiio.%s_size_hist" % kind] = [sum(r.hist[kind][i] for r in records)
                                              for i in range(10)]
            t["mpiio.max_%s_time_size" % kind] = OneOf(
                frozenset().union(*(r.slowest[kind] for r in records)))
        merged = Common()
        for r in records:
            merged = merged.merged(r.sizes)
        t["mpiio.common_sizes"] = merged
        files[path] = t
    return files


# ---- comparison ---------------------------------------------------------------------------------

def _member(entry, dotted):
    node = entry
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _common_problems(listed, truth, value_name, distinct_limit):
    """What is wrong with vigil's table `listed` against the truth: counts
    never above the truth, exact ones equal to it, no value 0 and no
    negative stride (Darshan lists neither), and where the file had few
    enough distinct values, Darshan's top 4 exactly."""
    problems = []
    for e in listed:
        value, count = e.get(value_name), e.get("count")
        true_count = truth.freq.get(value, 0)
        if value == 0 or (value is not None and value < 0):
            problems.append("lists %s %s" % (value_name, value))
        if count is not None and count > true_count:
            problems.append("%s %s: count %s above the truth %s" % (value_name, value, count,
                                                                    true_count))
        if "exact" not in e:
            problems.append("no \"exact\"")
        elif e["exact"] and count != true_count:
            problems.append("%s %s: \"exact\" count %s, truth %s" % (value_name, value, count,
                                                                     true_count))
    counts = [e.get("count", 0) for e in listed]
    if counts != sorted(counts, reverse=True):
        problems.append("not most common first")
    if len(truth.freq) <= distinct_limit:
        want = truth.darshan_list()
        got = [(e.get(value_name), e.get("count")) for e in listed]
        if got != want or not all(e.get("exact") for e in listed):
            problems.append("not the exact top %d" % COMMON_LISTED)
    return sorted(set(problems))


def _show(value):
    return "missing" if value is None else str(value)


def compare(truth, entry):
    """[(counter, vigil's, truth's)] where vigil's file entry disagrees."""
    out = []
    for key in sorted(truth):
        want = truth[key]
        got = _member(entry, key)
        if isinstance(want, Common):
            if got is None:
                out.append((key, "missing", str(want)))
                continue
            value_name = "stride" if key.endswith("strides") else "size"
            problems = _common_problems(got, want, value_name, VIGIL_EXACT_WITHIN)
            if problems:
                shown = [(e.get(value_name), e.get("count"), e.get("exact")) for e in got]
                out.append((key, "%s (%s)" % (shown, "; ".join(problems)), str(want)))
        elif isinstance(want, OneOf):
            ok = got == 0 if not want.sizes else got in want.sizes
            if not ok:
                out.append((key, _show(got), str(want)))
        elif got != want:
            out.append((key, _show(got), str(want)))
    return out
