#!/usr/bin/python3
"""Exports a calibrated, rotated, flipped panel's mapping as a udev rule, end to end.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 export_udev.py --motiond M --motionctl C --work DIR

Two made-up panels (fake_panel.py's): one plugged in at a USB port (udev's ID_PATH), mapped
by motiond.toml onto a portrait display on the right, turned 90 degrees, flipped left to
right and calibrated by a [[calibration]] selecting it by path; the other has no ID_PATH, as
a virtual device has none. `motionctl calibrate --export udev` runs for each, to standard
output and with --output. Prints its steps as JSON lines (what motionctl printed, said and
exited with); the checks are in CalibrateCommandTests.swift, which starts it.
"""
import argparse
import json
import os
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import LiveDaemon, Panel, PanelFailure  # noqa: E402

PLUGGED, VIRTUAL = "/dev/input/event61", "/dev/input/event62"
PATH = "pci-0000:00:14.0-usb-0:3:1.0"

CONFIGURATION = f"""[screen]
width = 3000
height = 1920

[[device]]
path = "{PATH}"
output = [1920, 0, 1080, 1920]
rotation = 90
flip_horizontal = true

[[device]]
name = "*"
output = [0, 0, 1920, 1080]

[[calibration]]
path = "{PATH}"
matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
"""


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


def export(args, daemon, *extra):
    run = subprocess.run([args.motionctl, "calibrate", "--export", "udev", "--socket", daemon.path, *extra],
                         capture_output=True, text=True, timeout=30)
    return {"status": run.returncode, "output": run.stdout, "said": run.stderr}


def refusals(args, daemon):
    """Exports to paths holding what is not a rule motionctl wrote; says what became of each."""
    guarded = os.path.join(args.work, "guarded")
    os.mkdir(guarded)
    configuration = os.path.join(guarded, "motiond.toml")
    with open(configuration, "w") as file:
        file.write("[screen]\nwidth = 1920\n")
    paths = {"configuration": configuration, "fifo": os.path.join(guarded, "fifo"),
             "stdout_link": os.path.join(guarded, "stdout.rules"), "device": os.path.join(guarded, "null")}
    os.mkfifo(paths["fifo"])
    os.symlink("/proc/self/fd/1", paths["stdout_link"])
    if os.geteuid() == 0:
        os.mknod(paths["device"], 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        del paths["device"]
    results = {}
    for name, path in paths.items():
        run = export(args, daemon, "--device", PLUGGED, "--output", path)
        mode = os.lstat(path).st_mode
        results[name] = {"status": run["status"], "output": run["output"], "said": run["said"],
                         "kind": stat.S_IFMT(mode)}
    with open(configuration) as file:
        results["configuration"]["contents"] = file.read()
    results["expected_kinds"] = {"configuration": stat.S_IFREG, "fifo": stat.S_IFIFO, "stdout_link": stat.S_IFLNK, "device": stat.S_IFCHR}
    results["leftovers"] = sorted(name for name in os.listdir(guarded) if name.startswith("."))
    return results


def check(args):
    plugged = Panel(args.work, args.motionctl, node=PLUGGED, id_path=PATH)
    Panel(args.work, args.motionctl, node=VIRTUAL, testbed=plugged.testbed)
    daemon = LiveDaemon(args.motiond, args.motionctl, args.work, CONFIGURATION)
    try:
        # Until both are read and mapped: a panel motiond has found but not yet opened is
        # listed without a mapping.
        end = time.monotonic() + 30
        while True:
            mapped = {device.get("node"): device["mapping"] for device in daemon.devices() if "mapping" in device}
            if {PLUGGED, VIRTUAL} <= mapped.keys():
                break
            if daemon.process.poll() is not None or time.monotonic() > end:
                raise PanelFailure("motiond did not read both panels within 30 s")
            time.sleep(0.1)
        mapping = mapped[PLUGGED]
        step("mapping", mapping=mapping)
        step("stdout", **export(args, daemon, "--device", PLUGGED))
        rules = os.path.join(args.work, "61-motiond-calibration.rules")
        written = export(args, daemon, "--device", PLUGGED, "--output", rules)
        with open(rules) as file:
            written["file"] = file.read()
        written["leftovers"] = sorted(name for name in os.listdir(args.work) if name.startswith("."))
        step("file", **written)
        step("again", **export(args, daemon, "--device", PLUGGED, "--output", rules))
        step("dash", **export(args, daemon, "--device", PLUGGED, "--output", "-"))
        step("refused", **refusals(args, daemon))
        step("virtual", **export(args, daemon, "--device", VIRTUAL))
    except (PanelFailure, OSError, ValueError, KeyError, StopIteration, subprocess.TimeoutExpired) as error:
        raise PanelFailure(f"{type(error).__name__}: {error}\n--- motiond said:\n{daemon.said()}")
    finally:
        daemon.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--motiond", required=True)
    parser.add_argument("--motionctl", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    try:
        check(args)
    except PanelFailure as error:
        print(error, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
