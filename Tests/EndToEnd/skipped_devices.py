#!/usr/bin/python3
"""Runs motiond beside touchscreens whose firmware describes them with nonsense axes.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 skipped_devices.py PRESENT.umockdev PRESENT.ioctl \\
        PLUGGED.umockdev PLUGGED.ioctl SOCKET MOTIONCTL -- MOTIOND ARGS…

PRESENT is there when motiond starts; PLUGGED is plugged in once motiond is ready, then
unplugged. After each step it prints the `devices` reply as {"step": …, "result": …}, once
motiond has taken the step in (every wait has a deadline), and `motionctl devices` (text and
JSON) while both are skipped. Then it asks for `stats`, stops motiond with SIGTERM and prints
{"step": "stopped", "code": …}.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402

DEADLINE = 60


def syspath_of(device_file):
    with open(device_file) as f:
        return "/sys" + next(line for line in f if line.startswith("P: "))[3:].strip()


def plug(testbed, device_file, ioctl_file):
    syspath = syspath_of(device_file)
    assert testbed.add_from_file(device_file), "cannot add " + device_file
    testbed.load_ioctl("/dev/input/" + os.path.basename(syspath), ioctl_file)
    return syspath


def main():
    separator = sys.argv.index("--")
    present_device, present_ioctl, plugged_device, plugged_ioctl, socket_path, motionctl = sys.argv[1:separator]
    command = sys.argv[separator + 1:]

    testbed = UMockdev.Testbed.new()
    plug(testbed, present_device, present_ioctl)
    notify_path = os.path.join(tempfile.mkdtemp(), "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(DEADLINE)
    # os.environ is a snapshot from before the testbed set UMOCKDEV_DIR: pass it on by hand.
    environment = dict(os.environ, UMOCKDEV_DIR=testbed.get_root_dir())
    daemon = subprocess.Popen(command, env=dict(environment, NOTIFY_SOCKET=notify_path))
    try:
        while b"READY=1" not in notify.recv(4096):
            pass

        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(socket_path)
        client.settimeout(DEADLINE)
        lines = client.makefile("r", encoding="utf-8")
        lines.readline()  # hello
        request_id = 0

        def request(op):
            nonlocal request_id
            request_id += 1
            client.sendall((json.dumps({"id": request_id, "op": op}) + "\n").encode())
            for line in lines:
                message = json.loads(line)
                if message.get("id") == request_id:
                    return message
            raise RuntimeError("motiond closed the connection")

        def devices_when(step, condition):
            """The devices reply once `condition` holds of it; the last one at the deadline."""
            deadline = time.monotonic() + DEADLINE
            while True:
                reply = request("devices")
                if condition(reply["result"]) or time.monotonic() > deadline:
                    print(json.dumps({"step": step, "result": reply["result"]}), flush=True)
                    return
                time.sleep(0.05)

        def skipped_nodes(result):
            return sorted(entry["node"] for entry in result.get("skipped", []))

        def invalid_nodes(result):
            return sorted(entry["node"] for entry in result.get("skipped", []) if "invalid" in entry["reason"])

        devices_when("started", lambda result: len(invalid_nodes(result)) == 1)

        # Adding the device announces it before its ioctls are loaded (motiond then skips a
        # node it cannot open yet); the "add" once they are is the one that counts.
        plugged = plug(testbed, plugged_device, plugged_ioctl)
        testbed.uevent(plugged, "add")
        devices_when("plugged", lambda result: len(invalid_nodes(result)) == 2)

        for arguments in (["devices"], ["devices", "--json"]):
            run = subprocess.run([motionctl, *arguments, "--socket", socket_path], env=environment,
                                 capture_output=True, text=True, timeout=DEADLINE)
            print(json.dumps({"step": "motionctl", "arguments": arguments, "code": run.returncode,
                              "output": run.stdout, "error": run.stderr}), flush=True)

        testbed.uevent(plugged, "remove")
        testbed.remove_device(plugged)
        devices_when("unplugged", lambda result: len(skipped_nodes(result)) == 1)

        print(json.dumps({"step": "stats", "result": request("stats")["result"]}), flush=True)
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
        try:
            code = daemon.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
            code = "did not stop within %d s" % DEADLINE
        print(json.dumps({"step": "stopped", "code": code}), flush=True)


if __name__ == "__main__":
    main()
