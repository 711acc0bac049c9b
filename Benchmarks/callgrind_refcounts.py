#!/usr/bin/env python3
"""Counts the calls to Swift's reference-counting entry points in a callgrind profile.

    valgrind --tool=callgrind --callgrind-out-file=fetch.out Compare --profile fetch 10000
    python3 Benchmarks/callgrind_refcounts.py fetch.out            # the total
    python3 Benchmarks/callgrind_refcounts.py fetch.out --callers  # by calling function

Each of these calls is an atomic read-modify-write of an object's header (or, for the
bridge-object variants, of a string's storage, which then calls swift_retain/release itself and
is counted twice). callgrind counts it as a handful of instructions; on the machine it costs far
more (it orders the memory operations around it, and the header it touches may be cold), which is
why a change can save little in instructions and much in time. Per object, as for instructions
(docs/Performance.md): (calls at N - calls at 1) / (N - 1), minus the previous step's.
"""
import collections
import re
import sys

ENTRY_POINTS = {
    "swift_retain", "swift_release", "swift_retain_n", "swift_release_n",
    "swift_bridgeObjectRetain", "swift_bridgeObjectRelease", "swift_unownedRetainStrong",
}


def calls(path):
    """(caller, callee) -> number of calls, for callees among ENTRY_POINTS."""
    names, caller, callee = {}, "?", ""
    counts = collections.Counter()
    pattern = re.compile(r"c?fn=\((\d+)\)(?: (.*))?")
    with open(path) as profile:
        for line in profile:
            if line.startswith("fn=") or line.startswith("cfn="):
                match = pattern.match(line.strip())
                if match.group(2):
                    names[match.group(1)] = match.group(2)
                name = names.get(match.group(1), "?")
                if line.startswith("fn="):
                    caller = name
                else:
                    callee = name
            elif line.startswith("calls=") and callee in ENTRY_POINTS:
                counts[(caller, callee)] += int(line[6:].split()[0])
    return counts


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    counts = calls(sys.argv[1])
    if "--callers" in sys.argv[2:]:
        for (caller, callee), number in counts.most_common(40):
            print(f"{number:>10}  {callee:<26} {caller[:140]}")
    print(sum(counts.values()))


if __name__ == "__main__":
    main()
