#!/usr/bin/env python3
"""The hot wrappers' machine code reads no table: their operation is a
constant, so its layer, class and statistics kind fold into the code.
And the globals they read (section vigil_hot) lie within one page.

A wrapper that passes its outcome's address to an out-of-line function
lets it escape; the compiler then reloads the operation from the stack
after every call and looks it up in vigil_op_table or a switch table
(CSWTCH): a read-only page per call, and a page walk after every system
call on a kernel with page-table isolation. This happened once unnoticed
(preload.h, preload_count_*), hence this check of the built library.

    hot_code.py LIBRARY
"""
import re
import subprocess
import sys

WRAPPERS = ["read", "write", "pread", "pwrite", "readv", "writev", "fread", "fwrite",
            "lseek", "open", "close"]
# A switch table is named CSWTCH.N; a string after one shows as CSWTCH.N+off
# (the rare paths' messages), which is not a table read.
SWITCH_TABLE = re.compile(r"<CSWTCH\.\d+>")
CALLED = re.compile(r"call.*<(vigil_op_layer|vigil_op_class)>")


def op_table_addresses(library):
    """vigil_op_table's address and the GOT slots that hold it: the code
    reaches a hidden array through its GOT slot (a RELATIVE relocation)."""
    nm = subprocess.run(["nm", library], check=True, capture_output=True, text=True).stdout
    table = next((int(line.split()[0], 16) for line in nm.splitlines()
                  if line.endswith(" vigil_op_table")), None)
    if table is None:
        return set()
    relocs = subprocess.run(["readelf", "-rW", library], check=True, capture_output=True,
                            text=True).stdout
    slots = {int(f[0], 16) for f in (line.split() for line in relocs.splitlines())
             if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE" and int(f[3], 16) == table}
    return slots | {table}


def disassembly(library):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", library],
                         check=True, capture_output=True, text=True).stdout
    functions, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            name = m.group(1)
            functions[name] = []
        elif name is not None and line.strip():
            functions[name].append(line)
    return functions


def main():
    functions = disassembly(sys.argv[1])
    table = op_table_addresses(sys.argv[1])
    failures = []
    # The endings must be inlined into each wrapper: an out-of-line copy
    # (the compiler's choice unless forced) is shared by several wrappers,
    # so its operation is not a constant.
    for name in functions:
        if name.startswith("preload_end_") or name in ("preload_call_end", "preload_count_own"):
            failures.append("%s is out of line: its operation cannot fold" % name)
    for wrapper in WRAPPERS:
        if wrapper not in functions:
            failures.append("%s: not found in %s" % (wrapper, sys.argv[1]))
            continue
        bad = [line.strip() for line in functions[wrapper]
               if SWITCH_TABLE.search(line) or CALLED.search(line)
               or any(int(a, 16) in table for a in re.findall(r"# ([0-9a-f]+) <", line))]
        if bad:
            failures.append("%s reads a table at run time: %s" % (wrapper, bad[0]))
    # The globals every call reads share one page (preload.h's PRELOAD_HOT):
    # the section must start on a page and stay within it.
    sections = subprocess.run(["readelf", "-SW", sys.argv[1]], check=True, capture_output=True,
                              text=True).stdout
    hot = re.search(r"\] vigil_hot\s+PROGBITS\s+([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+)", sections)
    if hot is None:
        failures.append("no vigil_hot section in %s" % sys.argv[1])
    elif int(hot.group(1), 16) % 4096 or int(hot.group(2), 16) > 4096:
        failures.append("vigil_hot at %#x, %d bytes: not within one page"
                        % (int(hot.group(1), 16), int(hot.group(2), 16)))
    for f in failures:
        print("FAIL " + f)
    if not failures:
        print("ok: %d wrappers, no table read" % len(WRAPPERS))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
