#!/usr/bin/env python3
"""Follow an element's position from motiond: Python, standard library only.

    python3 subscribe.py [ELEMENT] [--socket PATH] [--count N]

Connects to motiond's socket, subscribes to ELEMENT.position (default: surface, the
element of motiond's built-in scene) and prints each position as it changes. See
docs/protocol.md for everything else a client can ask.
"""
import argparse
import json
import os
import socket


def main():
    parser = argparse.ArgumentParser(description="Print an element's position as motiond publishes it.")
    parser.add_argument("element", nargs="?", default="surface")
    parser.add_argument("--socket", default=os.environ.get("MOTIOND_SOCKET", "/run/motiond/motiond.sock"))
    parser.add_argument("--count", type=int, default=0, help="stop after this many positions (0: never)")
    args = parser.parse_args()

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(args.socket)
    lines = connection.makefile("r", encoding="utf-8")

    hello = json.loads(lines.readline())
    print(f"connected to motiond {hello['version']}", flush=True)

    stream = f"{args.element}.position"
    request = {"id": 1, "op": "subscribe", "streams": [stream]}
    connection.sendall((json.dumps(request) + "\n").encode())

    seen = 0
    for line in lines:
        message = json.loads(line)
        if message.get("id") == 1 and not message["ok"]:
            raise SystemExit(f"motiond refused: {message['error']['message']}")
        if message.get("event") == "value" and message["stream"] == stream:
            value = message["value"]
            print(f"{message['t']:.3f} {stream} x={value['x']:.1f} y={value['y']:.1f}", flush=True)
            seen += 1
            if args.count and seen >= args.count:
                break


if __name__ == "__main__":
    main()
