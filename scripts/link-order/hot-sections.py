#!/usr/bin/python3
"""The functions a callgrind profile of motiond ran, hottest first, as gold's section
ordering file (--section-ordering-file): one section a line, `.text.` and the function's
mangled name, the section each function is in when compiled with -function-sections.

    hot-sections.py PROFILE.callgrind [--minus SHORTER.callgrind] --object motiond > motiond.order

Only functions of the object named (the binary's own code and what it links statically: the
Swift runtime, Foundation, NIO); libc and the loader are shared objects the link does not
place. Ordered by the instructions each ran itself (its self cost), so the code a frame runs
sits together in as few pages as it fills. With --minus (callgrind-frames.py's profiles of 3
plays and of 1), by what the longer run added, the cost of the frames between the two: the
functions every frame runs come first, then the rest either ran. Run valgrind with
--demangle=no (VALGRIND_OPTS), so the names are the symbols.
"""
import argparse
import collections
import os
import re
import sys

NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


def self_costs(path, object_name):
    """{function: instructions it ran itself} for the functions of `object_name` in a profile."""
    names = {"ob": {}, "fn": {}}
    self_cost = collections.Counter()
    object_of = {}
    current_object = current_function = None
    after_call = False

    def resolve(kind, text):
        match = NAME.match(text)
        if not match:
            return text
        number, name = match.groups()
        if name is not None:
            names[kind][number] = name
        return names[kind].get(number, text)

    with open(path, errors="replace") as profile:
        for line in profile:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                current_object = resolve("ob", line[3:])
            elif line.startswith("fn="):
                current_function = resolve("fn", line[3:])
                object_of.setdefault(current_function, current_object)
            elif line.startswith("cob="):
                resolve("ob", line[4:])
            elif line.startswith("cfn="):
                resolve("fn", line[4:])
            elif line.startswith("calls="):
                after_call = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                if after_call:
                    after_call = False  # the call's inclusive cost, not the caller's own
                    continue
                fields = line.split()
                if len(fields) >= 2 and current_function is not None:
                    self_cost[current_function] += int(fields[1])
    return {re.sub(r"'\d+$", "", name): cost for name, cost in self_cost.items()
            if cost > 0 and os.path.basename(object_of.get(name) or "") == object_name}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("profile")
    parser.add_argument("--minus", help="a shorter run's profile: rank by what the longer one added")
    parser.add_argument("--object", required=True, help="the basename of the object whose functions to list")
    args = parser.parse_args()

    costs = self_costs(args.profile, args.object)
    shorter = self_costs(args.minus, args.object) if args.minus else {}
    added = {name: cost - shorter.get(name, 0) for name, cost in costs.items()}
    # Functions callgrind found no symbol for are named by their address in the profiled
    # binary, which no other link shares.
    named = {name for name in set(costs) | set(shorter) if not name.startswith("0x")}
    ranked = sorted(named, key=lambda name: (-max(added.get(name, 0), 0), -costs.get(name, shorter.get(name, 0)), name))
    for name in ranked:
        print(".text." + name)
    per_frame = sum(1 for name in ranked if added.get(name, 0) > 0)
    print(f"hot-sections.py: {len(ranked)} functions of {args.object}, {per_frame} of them costing more in the longer run",
          file=sys.stderr)


if __name__ == "__main__":
    main()
