#!/usr/bin/python3
"""Stops motiond with SIGTERM while a finger is down on a fake touchscreen.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 stop_with_finger_down.py DEVICE.umockdev DEVICE.ioctl EVENTS \\
        SOCKET GESTURE_STREAM -- MOTIOND ARGS…

Starts motiond, waits for its READY=1, connects, subscribes to GESTURE_STREAM (say
card.drag), plugs the device in with EVENTS (a finger that lands, moves and stays down),
waits for the gesture to begin, sends SIGTERM, and prints every message the client gets
until motiond closes the connection, then {"step": "stopped", "code": …, "socket_left": …}.
Every wait has a 60 s deadline.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import EventNode, UMockdev  # noqa: E402


def main():
    separator = sys.argv.index("--")
    device_file, ioctl_file, events_file, socket_path, stream = sys.argv[1:separator]
    command = sys.argv[separator + 1:]

    testbed = UMockdev.Testbed.new()
    notify_path = os.path.join(tempfile.mkdtemp(), "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(60)
    daemon = subprocess.Popen(command, env=dict(os.environ, NOTIFY_SOCKET=notify_path, UMOCKDEV_DIR=testbed.get_root_dir()))
    try:
        while b"READY=1" not in notify.recv(4096):
            pass

        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(socket_path)
        client.settimeout(60)
        lines = client.makefile("r", encoding="utf-8")
        print(lines.readline(), end="", flush=True)  # hello
        client.sendall((json.dumps({"id": 1, "op": "subscribe", "streams": [stream]}) + "\n").encode())

        with open(device_file) as f:
            syspath = "/sys" + next(line for line in f if line.startswith("P: "))[3:].strip()
        testbed.add_from_file(device_file)
        node = "/dev/input/" + os.path.basename(syspath)
        testbed.load_ioctl(node, ioctl_file)
        EventNode(testbed, node).play_in_background(events_file)
        testbed.uevent(syspath, "add")

        for line in lines:
            print(line, end="", flush=True)
            message = json.loads(line)
            if message.get("stream") == stream and message.get("state") == "began":
                break

        daemon.send_signal(signal.SIGTERM)
        for line in lines:  # until motiond closes the connection
            print(line, end="", flush=True)
        code = daemon.wait(timeout=60)
        print(json.dumps({"step": "stopped", "code": code, "socket_left": os.path.exists(socket_path)}), flush=True)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


if __name__ == "__main__":
    main()
