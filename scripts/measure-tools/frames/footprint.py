#!/usr/bin/env python3
"""How much code an input frame runs: the 64-byte lines and 4 KiB pages its instructions lie in.

At one client motiond sleeps 17 ms between frames, and each wake-up finds its code cold: what
a frame costs then follows the lines and pages it must fetch again more than the instructions
it runs (docs/performance.md, "How much code a frame runs"). callgrind counts each instruction
apart when run with `--dump-instr=yes` (`callgrind-frames.py --dump-instr`); as for the
instructions a frame, the per-frame figure is the difference between the 3-play and 1-play
runs over the frames between them.

A line counts as run in a frame with the likelihood min(1, how often its most-run instruction
runs a frame): a line of a function that runs every frame counts 1, one of a function that runs
every fourth frame 0.25. The sum is how many distinct lines a frame's code spans; pages alike.
Lines are then shared out by object (the program, libc, libm) and by function (the function of
each line's most-run instruction).

    footprint.py OUT [--server motiond|floor] [--top N]

OUT holds `SERVER-1.callgrind`, `SERVER-3.callgrind` and `results.json` (`frames_between`).
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("out")
parser.add_argument("--server", default="motiond", choices=["motiond", "floor"])
parser.add_argument("--top", type=int, default=30, help="how many functions to list, by lines a frame")
args = parser.parse_args()

NAME = re.compile(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$")


def instructions(path):
    """Each instruction's self count ({address: Ir}) and its object and function."""
    costs = collections.Counter()
    where = {}
    names = {"ob": {}, "fn": {}}
    current = {"ob": "?", "fn": "?"}
    last = 0
    ir_column = None
    call_cost_next = False
    with open(path) as file:
        for line in file:
            head = line[0]
            if head in "0123456789+-*":
                fields = line.split()
                position = fields[0]
                if position == "*":
                    address = last
                elif position[0] in "+-":
                    address = last + int(position, 0)
                else:
                    address = int(position, 0)
                last = address
                if call_cost_next:  # the line after `calls=` is the call's inclusive cost
                    call_cost_next = False
                    continue
                costs[address] += int(fields[ir_column])
                where[address] = (current["ob"], current["fn"])
            elif line.startswith("calls="):
                call_cost_next = True
            elif line.startswith("positions:"):
                if "instr" not in line.split():
                    raise SystemExit(f"{path}: counted per line, not per instruction: run callgrind-frames.py with --dump-instr")
                ir_column = len(line.split()) - 1  # after the positions, Ir is the first event
            elif match := NAME.match(line.rstrip("\n")):
                called, kind, number, name = match.groups()
                if name is not None:
                    names[kind][number] = name
                if not called:
                    current[kind] = names[kind].get(number, number)
    return costs, where


def main():
    frames = json.load(open(os.path.join(args.out, "results.json")))["frames_between"]
    one, where = instructions(os.path.join(args.out, f"{args.server}-1.callgrind"))
    three, where_three = instructions(os.path.join(args.out, f"{args.server}-3.callgrind"))
    where.update(where_three)
    # Instructions that run less than once in fifty frames are start-up's or noise.
    per_frame = {address: (three[address] - one.get(address, 0)) / frames for address in three}
    per_frame = {address: runs for address, runs in per_frame.items() if runs > 0.02}

    def spans(bits):
        most = {}
        for address, runs in per_frame.items():
            unit = address >> bits
            if runs > per_frame.get(most.get(unit), 0):
                most[unit] = address
        return {unit: (min(1.0, per_frame[address]), address) for unit, address in most.items()}

    lines, pages = spans(6), spans(12)
    print(f"{args.server}: {sum(per_frame.values()):,.0f} instructions a frame in "
          f"{sum(p for p, _ in lines.values()):,.0f} lines of code ({len(lines):,} lines run at all) and "
          f"{sum(p for p, _ in pages.values()):,.1f} pages ({len(pages):,} at all)")
    by_object = collections.defaultdict(float)
    by_function = collections.defaultdict(float)
    for likelihood, address in lines.values():
        obj, function = where[address]
        by_object[os.path.basename(obj)] += likelihood
        by_function[function] += likelihood
    print("\nlines a frame, by object:")
    for obj, count in sorted(by_object.items(), key=lambda item: -item[1]):
        print(f"  {count:8.0f}  {obj}")
    top = sorted(by_function.items(), key=lambda item: -item[1])[:args.top]
    names = [function for function, _ in top]
    if shutil.which("swift-demangle"):
        names = subprocess.run(["swift-demangle", "--simplified"], input="\n".join(names), capture_output=True,
                               text=True).stdout.split("\n")
    print(f"\nthe {len(top)} functions with the most lines a frame:")
    for (_, count), name in zip(top, names):
        print(f"  {count:6.1f}  {name[:140]}")


main()
