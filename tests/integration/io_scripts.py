"""The workloads of the truth test and of bench/darshan_compare.py, as
io-script (io_script.c) and mpi-script (tests/mpi/mpi_script.c) scripts.
Generated, with a fixed seed where random, so that each script is fixed."""

import random

KIB, MIB = 1024, 1024 * 1024


def ior_fpp_1m(files=2, blocks=16):
    """IOR file per process, 1 MiB transfers: write, fsync, close; reopen,
    read back (one process standing for each rank's file)."""
    out = ["# IOR -F -t 1m -b %dm -e" % blocks]
    for i in range(files):
        name = "fpp.%d" % i
        out.append("0 open 0 %s wct 0644" % name)
        out += ["0 write 0 %d 0" % MIB] * blocks
        out += ["0 fsync 0", "0 close 0", "0 open 0 %s r" % name]
        out += ["0 read 0 %d 0" % MIB] * blocks
        out.append("0 close 0")
    return "\n".join(out) + "\n"


def ior_1k_unaligned(blocks=4096):
    """IOR -t 1k: 1 KiB transfers, three of four not on a 4 KiB boundary;
    the reads into a buffer 3 bytes past a page (not memory aligned)."""
    out = ["# IOR -t 1k -b 4m", "0 open 0 ior1k wct 0600"]
    out += ["0 write 0 %d 0" % KIB] * blocks
    out += ["0 close 0", "0 open 0 ior1k r"]
    out += ["0 read 0 %d 3" % KIB] * blocks
    out.append("0 close 0")
    return "\n".join(out) + "\n"


# Sizes on and around Darshan's bin edges, more than 8 of them.
EDGE_SIZES = [100, 101, 1024, 1025, 4096, 10240, 10241, 102400, 102401, 1048576, 512, 8192]


def random_offsets(accesses=64, seed=33):
    """IOR -z: random offsets over a 16 MiB file, sizes drawn from
    EDGE_SIZES (some more often): far more than 8 distinct strides and
    sizes, so every common table overflows."""
    rng = random.Random(seed)
    weights = [6, 1, 8, 1, 5, 3, 1, 2, 1, 2, 1, 1]
    out = ["# IOR -z, seed %d" % seed, "0 open 0 random bct 0640"]
    end = 0  # the file's size once written: the reads stay within it
    for kind in ("pwrite", "pread"):
        for _ in range(accesses):
            size = rng.choices(EDGE_SIZES, weights)[0]
            offset = rng.randrange(0, (16 * MIB if kind == "pwrite" else end) - size)
            end = max(end, offset + size)
            out.append("0 %s 0 %d %d %d" % (kind, offset, size, rng.choice([0, 0, 8, 5])))
    out.append("0 close 0")
    return "\n".join(out) + "\n"


def threads_in_order(threads, writes=48, seed=7):
    """GNU sort's output: `threads` threads writing one file by turns with
    write() (one shared offset), so every write after the first is
    consecutive in the file, whichever thread made it."""
    rng = random.Random(seed)
    out = ["# %d threads, one file, strictly in order" % threads,
           "0 open 0 sorted.%d wct 0644" % threads]
    for i in range(writes):
        out.append("%d write 0 %d 0" % (i % threads, rng.choice([4096, 8192, 65536, 1000])))
    out.append("0 close 0")
    return "\n".join(out) + "\n"


def rw_mix():
    """Reads and writes in turn (rw switches), with seeks, syncs, dup,
    zero-byte calls and stat on one file; a stdio stream with fflush, fseek and fileno."""
    out = ["# read/write mix", "0 open 0 mix bct 0664"]
    pattern = "wwrwrrwwwrwr"
    offset = 0
    for i, k in enumerate(pattern):
        if k == "w":
            out.append("0 pwrite 0 %d 4096 0" % offset)
            offset += 4096
        else:
            out.append("0 pread 0 %d 4096 4" % (offset - 4096))
        if i % 4 == 3:
            out.append("0 fsync 0" if i % 8 == 3 else "0 fdatasync 0")
    out += ["0 lseek 0 0", "0 read 0 1000 0", "0 write 0 1000 0", "0 dup 0 1",
            "0 write 1 100 0", "0 write 0 0 0", "0 pread 0 0 0 0", "0 close 1", "0 close 0",
            "0 stat mix"]
    out += ["0 fopen 2 stream w", "0 fwrite 2 100 0", "0 fwrite 2 1024 0", "0 fwrite 2 1024 0",
            "0 fflush 2", "0 fileno 2 3", "0 fseek 2 0", "0 fwrite 2 10240 0", "0 fclose 2",
            "0 fopen 2 stream r", "0 fread 2 1124 0", "0 fread 2 100 0", "0 fclose 2"]
    return "\n".join(out) + "\n"


SCRIPTS = {
    "ior_fpp_1m": ior_fpp_1m(),
    "ior_1k_unaligned": ior_1k_unaligned(),
    "random_offsets": random_offsets(),
    "threads2": threads_in_order(2),
    "threads4": threads_in_order(4),
    "rw_mix": rw_mix(),
}


def mpiio_shared(blocks=4):
    """IOR -a MPIIO on a shared file, 4 ranks: collective 1 MiB writes and
    reads (with a hint and a view), then independent 64 KiB writes and
    reads, then collective writes at each rank's file pointer through its
    own view; and a file rank 0 opens alone."""
    out = ["# IOR -a MPIIO -c, then without -c", "* open 0 shared wc world cb_nodes=1"]
    for b in range(blocks):
        out.append("* write_at_all 0 %d+%dr %d" % (b * 4 * MIB, MIB, MIB))
    out += ["* sync 0", "* set_view 0 0"]
    for b in range(blocks):
        out.append("* read_at_all 0 %d+%dr %d" % (b * 4 * MIB, MIB, MIB))
    out += ["* close 0", "* open 0 shared b world -"]
    for b in range(blocks):
        base = 16 * MIB + b * 4 * 64 * KIB
        out.append("* write_at 0 %d+%dr %d" % (base, 64 * KIB, 64 * KIB))
        out.append("* read_at 0 %d+%dr %d" % (base, 64 * KIB, 64 * KIB))
    # Each rank's view starts at its own 64 KiB; writes at its file pointer.
    out += ["* set_view 0 %d+%dr" % (20 * MIB, 64 * KIB), "* write_all 0 %d" % (64 * KIB),
            "* write_all 0 1000", "* close 0"]
    out += ["0 open 1 alone.0 wc self -", "0 write 1 %d" % (10 * KIB), "0 write 1 100",
            "0 close 1"]
    return "\n".join(out) + "\n"


MPI_SCRIPTS = {"mpiio_shared": mpiio_shared()}
