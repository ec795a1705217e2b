#!/usr/bin/python3
"""Runs motiond with a fake touchscreen that is plugged in only after a client subscribed.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 daemon_session.py DEVICE.umockdev DEVICE.ioctl EVENTS \\
        SOCKET STREAM [STREAM…] -- MOTIOND ARGS…

Starts motiond (which finds no touchscreen yet), waits for its READY=1 on a notify socket,
connects as a client, subscribes to the streams, then plugs the device in with its events:
so every frame reaches the subscriber, with no race. It prints every message the client gets
as a JSON line, until the first STREAM's element comes to rest after moving, then stops
motiond with SIGTERM and prints {"step": "stopped", "code": …, "socket_left": …}.
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
    device_file, ioctl_file, events_file, socket_path, *streams = sys.argv[1:separator]
    command = sys.argv[separator + 1:]

    testbed = UMockdev.Testbed.new()
    notify_path = os.path.join(tempfile.mkdtemp(), "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(60)
    # os.environ is a snapshot from before the testbed set UMOCKDEV_DIR: pass it on by hand.
    daemon = subprocess.Popen(command, env=dict(os.environ, NOTIFY_SOCKET=notify_path, UMOCKDEV_DIR=testbed.get_root_dir()))
    try:
        session(daemon, notify, socket_path, streams, testbed, device_file, ioctl_file, events_file)
    finally:
        # A failure anywhere above must not leave motiond running after this script.
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)


def session(daemon, notify, socket_path, streams, testbed, device_file, ioctl_file, events_file):
    while b"READY=1" not in notify.recv(4096):
        pass

    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(socket_path)
    client.settimeout(60)
    lines = client.makefile("r", encoding="utf-8")
    print(lines.readline(), end="", flush=True)  # hello
    client.sendall((json.dumps({"id": 1, "op": "subscribe", "streams": streams}) + "\n").encode())
    while True:
        line = lines.readline()
        print(line, end="", flush=True)
        if json.loads(line).get("id") == 1:
            break

    # Now plug the touchscreen in: motiond opens it on the udev "add" and reads the events.
    with open(device_file) as f:
        syspath = "/sys" + next(line for line in f if line.startswith("P: "))[3:].strip()
    testbed.add_from_file(device_file)
    node = "/dev/input/" + os.path.basename(syspath)
    testbed.load_ioctl(node, ioctl_file)
    EventNode(testbed, node).play_in_background(events_file)
    testbed.uevent(syspath, "add")

    state_stream = streams[0].split(".")[0] + ".state"
    moved = False
    for line in lines:
        print(line, end="", flush=True)
        message = json.loads(line)
        if message.get("stream") == state_stream:
            if message["value"] == "active":
                moved = True
            elif moved:
                break

    daemon.send_signal(signal.SIGTERM)
    code = daemon.wait(timeout=60)
    print(json.dumps({"step": "stopped", "code": code, "socket_left": os.path.exists(socket_path)}), flush=True)


if __name__ == "__main__":
    main()
