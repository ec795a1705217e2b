#!/usr/bin/env python3
"""Follow an element's position from motiond: Python, standard library only.

    python3 subscribe.py [ELEMENT] [--socket PATH] [--count N]

Connects to motiond's socket, subscribes to ELEMENT.position (default: surface, the
element of motiond's built-in scene) and prints each position as it changes. When motiond
restarts, it connects again (waiting longer after each failed try, up to 10 s) and
subscribes again: a new motiond sends a new hello, and the position it keeps across the
restart comes first. See docs/protocol.md for everything else a client can ask.
"""
import argparse
import json
import os
import random
import socket
import sys
import time


def say(text):
    """Prints a line at once; when the reader has gone (`| head`), ends quietly, as a filter does."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        sys.stderr.close()
        os._exit(0)


def follow(path, stream, count, seen):
    """One connection: prints positions until `count` (then returns True) or the end."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        lines = connection.makefile("r", encoding="utf-8")
        hello = json.loads(lines.readline() or "{}")
        if hello.get("event") != "hello":
            return False
        say(f"connected to motiond {hello['version']}")
        request = {"id": 1, "op": "subscribe", "streams": [stream]}
        connection.sendall((json.dumps(request) + "\n").encode())
        for line in lines:
            message = json.loads(line)
            if message.get("id") == 1 and not message["ok"]:
                raise SystemExit(f"motiond refused: {message['error']['message']}")
            if message.get("event") == "value" and message["stream"] == stream:
                value = message["value"]
                say(f"{message['t']:.3f} {stream} x={value['x']:.1f} y={value['y']:.1f}")
                seen[0] += 1
                if count and seen[0] >= count:
                    return True
    return False


def main():
    parser = argparse.ArgumentParser(description="Print an element's position as motiond publishes it.")
    parser.add_argument("element", nargs="?", default="surface")
    parser.add_argument("--socket", default=os.environ.get("MOTIOND_SOCKET", "/run/motiond/motiond.sock"))
    parser.add_argument("--count", type=int, default=0, help="stop after this many positions (0: never)")
    args = parser.parse_args()

    seen = [0]
    delay = 0.25
    while True:
        try:
            if follow(args.socket, f"{args.element}.position", args.count, seen):
                return
            delay = 0.25  # it was there: the next try comes soon
        except OSError as error:
            say(f"cannot talk to motiond at {args.socket}: {error}; trying again")
        # Jittered, so that a restarted motiond is not met by every kiosk at once.
        time.sleep(random.uniform(delay / 2, delay))
        delay = min(delay * 2, 10)


if __name__ == "__main__":
    main()
