#!/usr/bin/env python3
"""What one intercepted call touches, independent of the machine's load.

Runs preload-pages under valgrind --tool=lackey --trace-mem=yes, with and
without libvigil-preload.so (VIGIL_EXCLUDE="": every call recorded), and under Darshan 3.4.7's libdarshan.so (DARSHAN_ENABLE_NONMPI=1, its log
in a temporary directory) side by side in the same run, cuts the trace at
the marker load that follows each call, and prints per call
(median over the calls after the first 200): instructions, distinct 4 KiB
pages and distinct 64-byte cache lines touched (code and data), and the
data pages alone. On a kernel that flushes the TLB at every system call
(page-table isolation without PCID) each page a call touches after its
system call costs a page walk: that is what the pages column counts.

    preload_pages.py PRELOAD_PAGES_BIN LIBRARY [CASE ...] [--calls N] [--where]
                     [--darshan PREFIX]

--where lists the pages of one call (the 300th) by mapping. --darshan is
where Darshan is installed (default /opt/darshan-3.4.7: PREFIX/lib/
libdarshan.so); without it there, the Darshan rows are skipped with a line
that says so. Both record every file: VIGIL_EXCLUDE="" and
DARSHAN_EXCLUDE_DIRS=none (Darshan leaves out /dev/, /usr/, /etc/ ... by
default, so /dev/null, the "write" case's, would be its cheap path). Last,
the ratio of what vigil adds to what Darshan adds, per case.
"""
import os
import statistics
import subprocess
import sys
import tempfile


def trace(binary, case, calls, data_file, library, where=False, darshan_log=None):
    env = dict(os.environ)
    env["VIGIL_EXCLUDE"] = ""
    env["VIGIL_REPORT"] = "off"
    env.pop("VIGIL_SOCKET", None)
    if darshan_log:
        env["DARSHAN_ENABLE_NONMPI"] = "1"
        env["DARSHAN_LOGPATH"] = darshan_log
        env["DARSHAN_EXCLUDE_DIRS"] = "none"  # /dev/null counted, as vigil's is
    if library:
        env["LD_PRELOAD"] = library
    else:
        env.pop("LD_PRELOAD", None)
    maps = tempfile.NamedTemporaryFile(prefix="preload-pages-", suffix=".maps")
    env["PRELOAD_PAGES_MAPS"] = maps.name
    with maps, tempfile.NamedTemporaryFile(prefix="preload-pages-", suffix=".trace") as log:
        out = subprocess.run(
            ["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log.name,
             binary, case, str(calls), data_file],
            env=env, check=True, capture_output=True, text=True)
        marker = int(out.stdout.split()[1], 16)
        pieces, one = cut(log.name, marker)
        # Every call must be cut out of the trace by its marker load, also
        # under another library (one that touched the marker, or a wrapper
        # that swallowed calls, would shift every figure).
        cut_calls = calls - 1  # the first marker starts the first piece
        if len(pieces) != (cut_calls - 201 if cut_calls > 400 else cut_calls - 1):
            raise SystemExit("preload_pages: %d pieces of %d calls under %s: the marker does "
                             "not cut the trace into calls" % (len(pieces), calls, library))
        if where:
            show_where(one, open(maps.name).read().splitlines(), library)
        return pieces


def symbols(library):
    """(address, size, name) of the library's symbols, sorted."""
    out = subprocess.run(["nm", "-S", "-n", library], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4:
            syms.append((int(f[0], 16), int(f[1], 16), f[3]))
    return syms


def show_where(one, maps, library=None):
    """The pages (and lines on each) of one call, by mapping; in the
    library, by symbol."""
    syms = symbols(library) if library else []
    base = next((int(m.split()[0].split("-")[0], 16) for m in maps
                 if library and m.split()[-1].endswith(os.path.basename(library))), None)
    regions = []
    for m in maps:
        f = m.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        regions.append((lo, hi, f[5] if len(f) > 5 else "[anon]", int(f[2], 16), hi - lo))
    by_page = {}
    for kind, addr in one:
        by_page.setdefault(addr >> 12, set()).add((kind, addr >> 6))
    for page in sorted(by_page):
        a = page << 12
        name = next(("%s+%#x (of %#x)" % (os.path.basename(n), a - lo + off, size)
                     for lo, hi, n, off, size in regions if lo <= a < hi), "?")
        kinds = "".join(sorted({k for k, _ in by_page[page]}))
        in_library = any(lo <= a < hi and n.endswith(os.path.basename(library or "-"))
                         for lo, hi, n, off, size in regions)
        if base is not None and in_library:
            names = set()
            for _, line in by_page[page]:
                v = (line << 6) - base
                names.update(n for lo, size, n in syms if lo < v + 64 and v < lo + max(size, 1))
            name = "vigil %#x: %s" % (a - base, " ".join(sorted(names))[:120])
        print("    page %#x %-50s %-4s lines %d" % (a, name, kinds,
                                                    len({l for _, l in by_page[page]})))


def cut(path, marker):
    """Per call: (instructions, pages, lines, data pages)."""
    pieces = []
    one, current = [], []
    ins = 0
    pages, lines, dpages = set(), set(), set()
    started = False
    with open(path, "r", errors="replace") as f:
        for line in f:
            if len(line) < 4 or line[0] == "=":
                continue
            kind = line[:2].strip()
            if kind not in ("I", "L", "S", "M"):
                continue
            addr_s, _, size_s = line[3:].strip().partition(",")
            try:
                addr = int(addr_s, 16)
            except ValueError:
                continue
            if kind == "L" and addr == marker:
                if started:
                    pieces.append((ins, len(pages), len(lines), len(dpages)))
                    if len(pieces) == 300:
                        one = current
                current = []
                started = True
                ins = 0
                pages, lines, dpages = set(), set(), set()
                continue
            if not started:
                continue
            current.append((kind, addr))
            if kind == "I":
                ins += 1
            else:
                dpages.add(addr >> 12)
            pages.add(addr >> 12)
            lines.add(addr >> 6)
    return (pieces[200:-1] if len(pieces) > 400 else pieces[:-1]), one


def median(pieces, i):
    return statistics.median(p[i] for p in pieces)


def main():
    args = [a for a in sys.argv[1:]]
    calls = 1000
    where = "--where" in args
    if where:
        args.remove("--where")
    darshan = "/opt/darshan-3.4.7"
    if "--darshan" in args:
        k = args.index("--darshan")
        darshan = args[k + 1]
        del args[k:k + 2]
    if "--calls" in args:
        k = args.index("--calls")
        calls = int(args[k + 1])
        del args[k:k + 2]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, library = args[0], args[1]
    cases = args[2:] or ["write", "pread", "fwrite"]
    with tempfile.TemporaryDirectory(prefix="preload-pages-") as tmp:
        data = os.path.join(tmp, "data")
        with open(data, "wb") as f:
            f.write(b"\0" * 65536)
        darshan_lib = os.path.join(darshan, "lib", "libdarshan.so")
        libraries = [("plain", None), ("vigil", library)]
        if os.path.exists(darshan_lib):
            libraries.append(("darshan", darshan_lib))
        else:
            print("darshan: skipped, %s is not there (--darshan PREFIX)" % darshan_lib)
        darshan_log = os.path.join(tmp, "darshan-logs")
        os.mkdir(darshan_log)
        print("per call (median)      instructions   pages   lines  data pages")
        ratios = []
        for case in cases:
            rows = {}
            for label, lib in libraries:
                p = trace(binary, case, calls, data, lib, where,
                          darshan_log if label == "darshan" else None)
                rows[label] = [median(p, i) for i in range(4)]
                print("%-6s %-15s %12g %7g %7g %11g" % (case, label, *rows[label]))
            for label, _ in libraries[1:]:
                rows["+" + label] = [rows[label][i] - rows["plain"][i] for i in range(4)]
                print("%-6s %-15s %12g %7g %7g %11g" % (
                    case, "added " + label, *rows["+" + label]))
            if "+darshan" in rows and rows["+darshan"][0] > 0:
                ratios.append("%s %.2f" % (case, rows["+vigil"][0] / rows["+darshan"][0]))
        if ratios:
            print("added instructions, vigil / darshan: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
