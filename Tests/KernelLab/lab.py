#!/usr/bin/python3
"""motiond's kernel lab: the tests that need a real kernel's evdev, uinput and udev.

scripts/kernel-test boots a guest (QEMU, Debian's kernel, this machine's file system shared
read-only) and runs this script in it as root:

    lab.py --out DIR [NAME...]     run the tests (all, or those named), results to DIR
    lab.py --list                  print every test's name (no guest needed)
    lab.py --expect DIR            compute the replays the tests compare with (on the host)
    lab.py --plan N [NAME...]      the tests shared among N guests: one line a guest, tab-separated

Each result is a line of DIR/results.jsonl: {"test", "status" (passed|failed), "seconds",
"detail"}. The tests are listed by family in lab_tests.py; a newcomer starts there.
"""
import argparse
import faulthandler
import json
import os
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labkit  # noqa: E402
import lab_tests  # noqa: E402

# The most one test may take, its recording's playing included; past it the test fails
# (the rest still run), so that one hung step costs minutes, not the whole lab. A long
# recording gets four times its estimate (a dense one may be played twice, the second time
# twice as slow as the first).
TEST_DEADLINE = 240


def deadline(name):
    return max(TEST_DEADLINE, round(4 * lab_tests.estimate(name)))


class TestTimeout(labkit.LabFailure):
    pass


def on_alarm(number, frame):
    raise TestTimeout("the test ran past its deadline")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--expect", metavar="DIR", help="compute the replays the tests compare with, into DIR")
    parser.add_argument("--plan", metavar="GUESTS", type=int, help="the tests (those named, or all) shared among GUESTS guests")
    parser.add_argument("names", nargs="*")
    options = parser.parse_args()
    if options.expect:
        lab_tests.write_expectations(options.expect)
        return 0
    tests = lab_tests.all_tests()
    if options.plan:
        for run in lab_tests.plan([name for name in tests if not options.names or name in options.names], options.plan):
            print("\t".join(run))
        return 0
    if options.list:
        for name in tests:
            print(name)
        return 0
    selected = [name for name in tests if not options.names or name in options.names]
    unknown = [name for name in options.names if name not in tests]
    if unknown:
        print(f"lab.py: no test is called {', '.join(unknown)}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGALRM, on_alarm)
    results = os.path.join(options.out, "results.jsonl")
    # What a test writes for the run (the generated faults), beside the results.
    labkit.OUT = options.out
    lab_tests.prepare()
    for name in selected:
        start = time.monotonic()
        print(f"lab: {name} …", flush=True)
        seconds = deadline(name)
        signal.alarm(seconds)
        # Should the alarm not get through (a wait in C that does not return), a thread of
        # the interpreter's own prints where every thread was, and ends the run.
        faulthandler.dump_traceback_later(seconds + 30, exit=True)
        try:
            detail = tests[name]() or ""
            status = "passed"
        except Exception as failure:  # every failure is the test's, reported, and the next runs
            status = "failed"
            detail = f"{failure}" if isinstance(failure, labkit.LabFailure) else traceback.format_exc()
            if isinstance(failure, TestTimeout):
                detail += f" of {seconds} s"
        finally:
            signal.alarm(0)
            faulthandler.cancel_dump_traceback_later()
            lab_tests.clean_up()
        seconds = round(time.monotonic() - start, 2)
        print(f"lab: {name} {status} in {seconds} s", flush=True)
        with open(results, "a") as out:
            out.write(json.dumps({"test": name, "status": status, "seconds": seconds, "detail": detail}) + "\n")
    lab_tests.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
