#!/usr/bin/python3
"""The contact filters on a live touchscreen: a finger that rests is cancelled by the timer.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 live_filters.py --motiond M --motionctl C --work DIR

motiond reads the made-up panel of fake_panel.py with `stuck_after = 0.5`. A client
subscribes to screen.contacts; a finger goes down and never moves or lifts, so the panel
sends nothing more. The contact can only end by the stuck filter's timer: this script waits
(with a deadline) for screen.contacts to empty, then reads stats and devices, and the log.
A second finger that lands afterwards is a contact of its own. Prints its steps as JSON
lines; exits 0 on success, else says why with motiond's log.
Started by DisplayCommandTests.swift (FilterCountTests).
"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import NODE, LiveDaemon, Panel, PanelFailure, live_arguments  # noqa: E402


class Failure(Exception):
    pass


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


def main():
    args = live_arguments()
    daemon = None
    try:
        panel = Panel(args.work, args.motionctl)
        daemon = LiveDaemon(args.motiond, args.motionctl, args.work,
                            "[screen]\nwidth = 1920\nheight = 1080\n[[device]]\nname = \"*\"\nstuck_after = 0.5\n")
        path = daemon.path

        def ctl(*arguments):
            run = subprocess.run([args.motionctl, *arguments, "--json", "--socket", path], capture_output=True, text=True, timeout=30)
            if run.returncode != 0:
                raise Failure(f"motionctl {' '.join(arguments)}: {run.stderr}")
            return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]

        daemon.wait_for_panel()

        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(30)
        client.connect(path)
        lines = client.makefile("r")
        lines.readline()
        client.sendall(b'{"id": 1, "op": "subscribe", "streams": ["screen.contacts"]}\n')

        def contacts_until(predicate, deadline=30):
            end = time.monotonic() + deadline
            while time.monotonic() < end:
                message = json.loads(lines.readline() or "null")
                if message is None:
                    raise Failure("motiond closed the connection")
                if message.get("stream") == "screen.contacts" and predicate(message["value"]):
                    return message
            raise Failure(f"screen.contacts did not become what was awaited within {deadline} s")

        contacts_until(lambda value: value == [])  # the value on subscribing
        landed_at = time.monotonic()
        panel.down(16384, 16384)
        down = contacts_until(lambda value: len(value) == 1)
        step("down", contact=down["value"][0], t=down["t"])
        gone = contacts_until(lambda value: value == [])
        step("cancelled", t=gone["t"], after=gone["t"] - down["t"], waited=time.monotonic() - landed_at)
        stats = ctl("stats")[0]
        device = next(device for device in ctl("devices") if device["node"] == NODE)
        step("counted", stats=stats["filtered"].get(NODE), devices=device["filtered"])
        # The finger is still down for the panel, and ignored; a second one is a contact of its own.
        panel.write([(3, 0x2F, 1), (3, 0x39, 99), (3, 0x35, 1000), (3, 0x36, 1000), (0, 0, 0)])
        second = contacts_until(lambda value: len(value) == 1)
        step("second", contact=second["value"][0])
        with open(daemon.log_path) as file:
            step("log", lines=[line.strip() for line in file if "stuck_after" in line])
    except (Failure, PanelFailure, OSError, ValueError, KeyError, StopIteration, subprocess.TimeoutExpired) as error:
        said = daemon.said() if daemon else "(not started)"
        print(f"live_filters: {type(error).__name__}: {error}\n--- motiond said:\n{said}", file=sys.stderr)
        sys.exit(1)
    finally:
        if daemon:
            daemon.stop()


if __name__ == "__main__":
    main()
