#!/usr/bin/env python3
"""Writes a suite of N cases (default 1000) over the testprogs samples with
varied TRACE ON selections, buffer sizes and formats, to time `os2trace test`:

    python3 suites/bench/generate.py 1000 > /tmp/bench/bench.toml
    os2trace test /tmp/bench/bench.toml --bless --jobs 2      # golden files
    time os2trace test /tmp/bench/bench.toml --jobs 1
    time os2trace test /tmp/bench/bench.toml --jobs 2
"""
import sys

PROGRAMS = ["ARGS16", "ARGS32", "DLLCAL16", "DLLCAL32", "FARCAL16", "FILEIO16",
            "FILEIO32", "HELLO16", "HELLO32", "LOOP16", "LOOP32", "MSG32", "MSGVIO16"]
SPECS = ["", "(1)", "(2)", "(1,2)", "(1-2)"]

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
print("[suite]\nname = \"bench\"\n")
for k in range(n):
    prog = PROGRAMS[k % len(PROGRAMS)]
    spec = SPECS[(k // len(PROGRAMS)) % len(SPECS)]
    kb = 1 + (k * 7) % 63
    fmt = "old" if k % 3 == 0 else "new"
    print(f"""[[case]]
name = "c{k:04}-{prog}"
files = ["testprogs:{prog}.*", "testprogs:TPDLL*.DLL"]
trcust = ["{prog}.TSF /M={prog}.MAP"]
trace = ["{prog}{spec}"]
tracebuf = {kb}
format = "{fmt}"
program = "{prog}.EXE"
check = ["stda", "tracefmt", "hits", "exit", "output"]
""")
