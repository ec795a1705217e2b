#!/usr/bin/env python3
"""Print where motiond's card is as fingers (or a replayed drag) move it, carrying on
through restarts of motiond: the client reconnects and subscribes again by itself.

    python3 follow_card.py [ELEMENT] [--socket PATH]     (default: card, $MOTIOND_SOCKET)
"""
import argparse
import asyncio
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2] / "clients/python"))  # in a checkout
import motiond  # noqa: E402


async def follow(element: str, socket: str | None) -> None:
    def say(state: str, detail: dict) -> None:
        print(f"motiond is {state}", detail.get("reason") or "", file=sys.stderr, flush=True)

    async with motiond.Client(socket, on_state=say) as client:
        async for pose in client.follow(element):
            print(f"{element} x={pose.position['x']:.1f} y={pose.position['y']:.1f}", flush=True)


parser = argparse.ArgumentParser(description="Print an element's position through motiond's restarts.")
parser.add_argument("element", nargs="?", default="card")
parser.add_argument("--socket", help="motiond's socket (default: $MOTIOND_SOCKET, /run/motiond/motiond.sock)")
arguments = parser.parse_args()
asyncio.run(follow(arguments.element, arguments.socket))
