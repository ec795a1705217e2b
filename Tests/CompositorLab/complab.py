#!/usr/bin/python3
"""motiond's compositor lab: a touch from a panel through motiond's virtual touchscreen to a
real Wayland compositor's libinput and on to its clients (wev, and Chromium on page.html).

scripts/compositor-test boots one guest per compositor and runs this script in it as root:

    complab.py --out DIR --compositor weston|sway [NAME...]   run the tests (all, or those named)
    complab.py --list                                         every test's name, both compositors

Each result is a line of DIR/results.jsonl: {"test", "status" (passed|failed), "seconds",
"detail"}, as the kernel lab writes them. The guest starts motiond, the compositor and
Chromium once, then plays every scenario to wev and then to the page (a client at a time has
the output), measures the latency, plays the bundled recordings to the page, and last tries
the rotated outputs; the tests are judged from what was recorded.
"""
import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import labkit  # noqa: E402  (session.py puts the kernel lab on the path)
import latency  # noqa: E402
import recordings_to_page as recordings  # noqa: E402

COMPOSITORS = ("weston", "sway")
TESTS = ("start", "drag", "two fingers", "claimed touch", "cancels", "latency", "recordings", "rotated output")


def names(compositor):
    return [f"{compositor} {test}" for test in TESTS]


class Results:
    """Each test's result as a line of OUT/results.jsonl, and on the console."""

    def __init__(self, out):
        self.path = os.path.join(out, "results.jsonl")

    def write(self, name, passed, seconds, detail):
        status = "passed" if passed else "failed"
        print(f"lab: {name} {status} in {seconds} s", flush=True)
        with open(self.path, "a") as out:
            out.write(json.dumps({"test": name, "status": status, "seconds": round(seconds, 2), "detail": detail}) + "\n")


def attempt(step):
    """(value, None) of `step()`, or (None, the failure's message)."""
    try:
        return step(), None
    except Exception as failure:  # a step's failure is its tests', reported; the rest go on
        return None, f"{failure}" if isinstance(failure, labkit.LabFailure) else traceback.format_exc()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--compositor", choices=COMPOSITORS)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("names", nargs="*")
    options = parser.parse_args()
    if options.list:
        for compositor in COMPOSITORS:
            print("\n".join(names(compositor)))
        return 0
    kind = options.compositor
    selected = [name for name in names(kind) if not options.names or name in options.names]
    tests = {name.split(" ", 1)[1] for name in selected}
    results = Results(options.out)
    labkit.OUT = options.out
    os.chmod(labkit.SCRATCH, 0o1777)

    clock = time.monotonic()
    lab, failure = attempt(lambda: cases.Lab(kind, options.out))
    if failure:
        for name in selected:
            results.write(name, False, time.monotonic() - clock, f"the lab did not start: {failure}")
        return 0
    setup_seconds = time.monotonic() - clock
    if "start" in tests:
        timings, failure = attempt(lab.timings)
        results.write(f"{kind} start", failure is None, setup_seconds, timings or failure)
    try:
        run_tests(lab, kind, tests, results)
    finally:
        lab.close()
    return 0


def keep(played, name):
    """What each scenario's play recorded (motiond's published tracks and the client's events),
    as OUT/NAME: a failed case's verdict names what it judged, and this what it judged it by."""
    with open(os.path.join(labkit.OUT, name), "w") as out:
        json.dump({scenario: {"published": {str(contact): track for contact, track in record["published"].items()},
                              "events": record["events"], "seconds": record["seconds"]}
                   for scenario, record in played.items()}, out)


def run_tests(lab, kind, tests, results):
    """Plays what the selected tests need and judges each test; one that failed to record
    fails its tests with the reason. The scenarios go to wev and then to the page (a client at
    a time has the output), then the latency and the recordings to the same page (Chromium
    takes a minute or more to start under emulation: once a guest), and last the rotated
    outputs, each a compositor started anew with its output turned. The cancels may play the
    page's cases once more, when the page alone failed them by its lateness (cases.cancels)."""
    judged = [scenario for scenario in cases.judged_scenarios() if scenario.name in tests]
    cancels = cases.cancel_scenarios() if "cancels" in tests else []
    records = {}
    for target in ("wl_touch", "page") if judged or cancels else ():
        clock = time.monotonic()
        played, failure = attempt(lambda: lab.play_all(target, judged + cancels))
        records[target] = (played or {}, failure, time.monotonic() - clock)
        keep(played or {}, f"records-{target}.json")
    for scenario in judged:
        clock = time.monotonic()
        verdict, failure = attempt(lambda: cases.judge(scenario, records))
        seconds = sum(record[0].get(scenario.name, {}).get("seconds", 0) for record in records.values())
        results.write(f"{kind} {scenario.name}", failure is None, seconds + time.monotonic() - clock, verdict or failure)
    if cancels:
        clock = time.monotonic()
        verdict, failure = attempt(lambda: cases.cancels(lab, kind, cancels, records))
        seconds = sum(record[0].get(scenario.name, {}).get("seconds", 0) for record in records.values() for scenario in cancels)
        results.write(f"{kind} cancels", failure is None, seconds + time.monotonic() - clock, verdict or failure)
    for test, run in (("latency", latency.stage_latency), ("recordings", recordings.recordings_to_page),
                      ("rotated output", cases.rotated_output)):
        if test in tests:
            clock = time.monotonic()
            verdict, failure = attempt(lambda: run(lab))
            results.write(f"{kind} {test}", failure is None, time.monotonic() - clock, verdict or failure)


if __name__ == "__main__":
    sys.exit(main())
