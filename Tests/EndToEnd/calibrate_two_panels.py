#!/usr/bin/python3
"""Calibrates one of two identical touchscreens with hostile names, end to end.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 calibrate_two_panels.py --motiond M --motionctl C --work DIR

Two made-up panels of one model (fake_panel.py's, ids 04f3:2a1c) are plugged in at two USB
ports (udev's ID_PATH). Their firmware names them with what a USB descriptor can hold: a
newline that would start a [daemon] table with control_groups, DEL, a journal priority
`<3>` after a newline, quotes, backslashes and invalid UTF-8. motiond is started from WORK
with a relative --config (etc/motiond.toml); `motionctl calibrate` runs from another
directory. The right-hand panel is mounted off by MATRIX, and each target motionctl
announces is touched where that error puts it.

Then: the drop-in is in the daemon's conf.d and selects the right-hand panel by its path;
it holds exactly one [[calibration]] (read with Python's own TOML reader); `devices` shows the
right-hand panel calibrated and selected by path, the left-hand one not; `stats` gives the
configuration's absolute path; the log and `motionctl devices` have no line the names
started. Last, a later drop-in that selects the same panel by the same path overrides any
calibration: calibrate must then fail, say why, and leave the first drop-in as it was.

Prints its steps as JSON lines; every wait has a deadline; exits 0 on success, else says why
with motiond's log. Started by CalibrateCommandTests.swift.
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import Panel, PanelFailure, live_arguments  # noqa: E402

LEFT, RIGHT = "/dev/input/event61", "/dev/input/event62"
LEFT_PATH, RIGHT_PATH = "pci-0000:00:14.0-usb-0:1:1.0", "pci-0000:00:14.0-usb-0:2:1.0"
LEFT_NAME = b'Evil Panel\n[daemon]\ncontrol_groups = ["users"] #\x7f'
RIGHT_NAME = b'<3>Evil "Panel" \\ \xff\xfe\n<3>motiond: forged line\x1b[2J'
MATRIX = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
SPAN = 32768
SCREEN = (1920, 1080)

CONFIGURATION = """[screen]
width = 1920
height = 1080

[[device]]
name = "*"

[[element]]
id = "card"
center = [960, 540]
size = [400, 300]
"""


class Failure(Exception):
    pass


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


def device_units(point):
    """Where the mounting error MATRIX makes the right-hand panel report a touch at `point` px."""
    u, v = point[0] / SCREEN[0], point[1] / SCREEN[1]
    a, b, c, d, e, f = MATRIX
    det = a * e - b * d
    x = (e * (u - c) - b * (v - f)) / det
    y = (a * (v - f) - d * (u - c)) / det
    return round(x * SPAN), round(y * SPAN)


class Lines:
    """A process's standard output, line by line as JSON, each read with a deadline."""

    def __init__(self, process):
        self.queue = queue.Queue()
        threading.Thread(target=self._pump, args=(process.stdout,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.queue.put(line)
        self.queue.put(None)

    def next(self, deadline=60):
        try:
            line = self.queue.get(timeout=deadline)
        except queue.Empty:
            raise Failure(f"nothing from motionctl within {deadline} s")
        if line is None:
            raise Failure("motionctl ended early")
        return json.loads(line)


def ctl(args, *arguments, cwd=None):
    return subprocess.run([args.motionctl, *arguments, "--socket", args.socket], capture_output=True, text=True, timeout=30, cwd=cwd)


def calibrate(args, panel, elsewhere):
    """Runs motionctl calibrate on the right-hand panel, touching each target; returns
    (exit status, its JSON lines, its standard error)."""
    process = subprocess.Popen([args.motionctl, "calibrate", "--socket", args.socket, "--device", RIGHT, "--points", "4", "--json", "--timeout", "30"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=elsewhere)
    try:
        lines, seen = Lines(process), []
        while True:
            try:
                line = lines.next()
            except Failure:
                break
            seen.append(line)
            if line.get("step") == "target":
                panel.tap(*device_units((line["x"], line["y"])))
        status = process.wait(timeout=30)
        return status, seen, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def check(args):
    work = args.work
    etc = os.path.join(work, "etc")
    os.makedirs(etc)
    elsewhere = os.path.join(work, "elsewhere")
    os.makedirs(elsewhere)
    with open(os.path.join(etc, "motiond.toml"), "w") as file:
        file.write(CONFIGURATION)
    left = Panel(work, args.motionctl, node=LEFT, name=LEFT_NAME, id_path=LEFT_PATH)
    right = Panel(work, args.motionctl, node=RIGHT, name=RIGHT_NAME, id_path=RIGHT_PATH, testbed=left.testbed)
    args.socket = os.path.join(work, "motiond.sock")
    log_path = os.path.join(work, "motiond.log")
    port = free_port()
    with open(log_path, "w") as log:
        daemon = subprocess.Popen([args.motiond, "--config", "etc/motiond.toml", "--socket", args.socket, "--websocket", f"127.0.0.1:{port}"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd=work)
    try:
        end = time.monotonic() + 30
        while True:
            if daemon.poll() is not None:
                raise Failure(f"motiond exited with {daemon.returncode}")
            run = ctl(args, "devices", "--json") if os.path.exists(args.socket) else None
            devices = [json.loads(line) for line in run.stdout.splitlines()] if run and run.returncode == 0 else []
            if {device.get("node") for device in devices} >= {LEFT, RIGHT}:
                break
            if time.monotonic() > end:
                raise Failure("motiond did not read both panels within 30 s")
            time.sleep(0.1)
        step("ready", names={device["node"]: device["name"] for device in devices},
             paths={device["node"]: device["path"] for device in devices})
        stats = json.loads(ctl(args, "stats", "--json").stdout)
        step("stats", config=stats["config"]["file"])

        status, seen, said = calibrate(args, right, elsewhere)
        if status != 0:
            raise Failure(f"motionctl calibrate exited with {status}: {said}\n{seen}")
        written = next(line for line in seen if line.get("step") == "written")
        with open(written["path"], "rb") as file:
            drop_in = file.read()
        step("written", path=written["path"], matrix=written["matrix"], toml=tomllib.loads(drop_in.decode()), lines=len(drop_in.splitlines()),
             files=sorted(os.listdir(os.path.join(etc, "conf.d"))), elsewhere=sorted(os.listdir(elsewhere)))

        devices = [json.loads(line) for line in ctl(args, "devices", "--json").stdout.splitlines()]
        step("devices", devices={device["node"]: {"calibration": device["mapping"]["calibration"], "selected_by": device["selected_by"]} for device in devices})
        text = ctl(args, "devices").stdout
        step("devices_text", lines=text.splitlines())

        # A later drop-in selecting the same panel by the same path: the next calibration
        # cannot take effect, and must say so and leave the first one as it was.
        with open(os.path.join(etc, "conf.d", "99-override.toml"), "w") as file:
            file.write(f'[[calibration]]\npath = "{RIGHT_PATH}"\nmatrix = [1, 0, 0, 0, 1, 0]\n')
        reloaded = request(args.socket, "reload")
        if not reloaded.get("ok"):
            raise Failure(f"motiond refused the override: {reloaded}")
        status, seen, said = calibrate(args, right, elsewhere)
        with open(written["path"], "rb") as file:
            unchanged = file.read() == drop_in
        step("overridden", status=status, said=said, unchanged=unchanged, steps=[line.get("step") for line in seen],
             files=sorted(os.listdir(os.path.join(etc, "conf.d"))))
    except (Failure, PanelFailure, OSError, ValueError, KeyError, StopIteration, subprocess.TimeoutExpired) as error:
        with open(log_path, errors="replace") as file:
            raise Failure(f"{type(error).__name__}: {error}\n--- motiond said:\n{file.read()[-3000:]}")
    finally:
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
    with open(log_path, "rb") as file:
        step("log", lines=[line.decode(errors="replace") for line in file.read().split(b"\n") if line])


def request(path, op):
    """One request over the socket, as a client would send it; its reply (30 s at most)."""
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(path)
        client.sendall(json.dumps({"id": 1, "op": op}).encode() + b"\n")
        reader = client.makefile("rb")
        for line in reader:
            message = json.loads(line)
            if message.get("id") == 1:
                return message
    raise Failure(f"no reply to {op}")


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    args = live_arguments()
    try:
        check(args)
    except (Failure, PanelFailure) as error:
        print(f"calibrate_two_panels: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
