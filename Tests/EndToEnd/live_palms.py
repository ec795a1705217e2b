#!/usr/bin/python3
"""The palm filter on a live touchscreen: a palm that lands gives no frame, yet is counted
and logged, also when the panel is unplugged before motiond read it.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 live_palms.py --motiond M --motionctl C --work DIR

motiond reads the made-up panel of fake_panel.py, with a touch axis, and `palm_size = 3000`
(30 mm). A palm (35 mm) lands: the filters swallow that frame whole, so only the filters'
report can tell of it; this script waits (with a deadline) for `stats` to count it, and reads
the log. Then motiond is stopped (SIGSTOP) while a second palm lands and the panel is
unplugged, and let go (SIGCONT): whether it then reads the palm before it hears of the
removal, or reads it while handling the removal, it must count and log the palm before the
panel goes, which the metrics (they keep a gone device's counts) and the log show. Which of
the two happens is umockdev's to decide: its uevent sometimes reaches motiond after the
panel's events even so. Prints its steps as JSON lines; exits 0 on success, else says why
with motiond's log.
Started by DisplayCommandTests.swift (FilterCountTests).
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import NODE, LiveDaemon, Panel, PanelFailure, live_arguments  # noqa: E402


class Failure(Exception):
    pass


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


def palm(panel, tracking_id, behind=False):
    """A palm, 35 mm across, lands in slot 0 at the panel's middle (`behind`: while motiond
    is stopped, see Panel.write)."""
    panel.write([(3, 0x2F, 0), (3, 0x39, tracking_id), (3, 0x35, 16384), (3, 0x36, 16384), (3, 0x30, 3500), (1, 0x14A, 1), (0, 0, 0)],
                behind=behind)


def stopped(pid):
    """Whether every thread of process `pid` is stopped (state T in /proc)."""
    tasks = f"/proc/{pid}/task"
    states = []
    for task in os.listdir(tasks):
        with open(f"{tasks}/{task}/stat") as file:
            states.append(file.read().rsplit(")", 1)[1].split()[0])
    return all(state == "T" for state in states)


def main():
    args = live_arguments()
    daemon = None
    try:
        panel = Panel(args.work, args.motionctl, touch_major=True)
        daemon = LiveDaemon(args.motiond, args.motionctl, args.work,
                            "[screen]\nwidth = 1920\nheight = 1080\n[[device]]\nname = \"*\"\npalm_size = 3000\n")
        path = daemon.path

        def ctl(*arguments, json_lines=True):
            run = subprocess.run([args.motionctl, *arguments, *(["--json"] if json_lines else []), "--socket", path],
                                 capture_output=True, text=True, timeout=30)
            if run.returncode != 0:
                raise Failure(f"motionctl {' '.join(arguments)}: {run.stderr}")
            return [json.loads(line) for line in run.stdout.splitlines() if line.strip()] if json_lines else run.stdout

        def until(what, predicate, deadline=30):
            end = time.monotonic() + deadline
            while time.monotonic() < end:
                value = predicate()
                if value:
                    return value
                time.sleep(0.05)
            raise Failure(f"{what} did not happen within {deadline} s")

        def log_lines(text):
            with open(daemon.log_path) as file:
                return [line.strip() for line in file if text in line]

        daemon.wait_for_panel()

        palm(panel, 1)
        counted = until("the palm counted", lambda: (ctl("stats")[0]["filtered"].get(NODE) or {}).get("palms") == 1 and ctl("stats")[0]["filtered"][NODE])
        step("counted", filtered=counted, log=log_lines("larger than a palm"))
        panel.write([(3, 0x39, -1), (1, 0x14A, 0), (0, 0, 0)])

        # The second palm and the unplug reach motiond in one wake: stopped (a signal is
        # delivered a moment after it is sent) until both are there.
        daemon.process.send_signal(signal.SIGSTOP)
        try:
            until("motiond stopping", lambda: stopped(daemon.process.pid))
            palm(panel, 2, behind=True)
            panel.unplug()
        finally:
            daemon.process.send_signal(signal.SIGCONT)
        until("the unplug", lambda: log_lines("went away"))
        metrics = ctl("metrics", json_lines=False)
        palms = [line for line in metrics.splitlines() if line.startswith("motiond_contacts_filtered_total{") and 'filter="palm"' in line]
        step("unplugged", metrics=palms, log=log_lines("larger than a palm"))
    except (Failure, PanelFailure, OSError, ValueError, KeyError, StopIteration, subprocess.TimeoutExpired) as error:
        said = daemon.said() if daemon else "(not started)"
        print(f"live_palms: {type(error).__name__}: {error}\n--- motiond said:\n{said}", file=sys.stderr)
        sys.exit(1)
    finally:
        if daemon:
            daemon.stop()


if __name__ == "__main__":
    main()
