#!/usr/bin/env python3
"""Touch prediction as a page uses it, in Debian's headless Chromium.

    prediction_in_browser.py --motiond M --config F --recording R

Starts motiond with F (whose [screen] prediction is on) replaying R in a loop, with its
WebSocket listener on a free loopback port; opens the live page there and, in it, binds a box
to the card with motiond.js (`bind(box, 'card')`, as a kiosk's page does), watching every
transform the client writes. Prints one JSON line: how many draws there were, how many drew
the predicted position while it was apart from the position, how many drew the plain one
then (none should), and how often the live page showed the card's predicted box. Every wait
has a deadline; Chromium and motiond are killed on every path. Started by
BrowserLivePageTests.swift.
"""
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_live_page import Browser, Failure, free_port, log_of, run_check  # noqa: E402

BIND = r"""(async () => {
  const motiond = await import('/motiond.js');
  const client = motiond.connect();
  const latest = {};
  client.subscribe(['card.position', 'card.predicted_position'], (value, stream) => { latest[stream] = value; });
  const box = document.createElement('div');
  document.body.append(box);
  client.bind(box, 'card');
  window.__prediction = { draws: 0, predicted: 0, plainWhenApart: 0, ghosts: 0 };
  new MutationObserver(() => {
    const found = /translate\(([-\d.e]+)px, ([-\d.e]+)px\)/.exec(box.style.transform);
    const p = latest['card.position'], q = latest['card.predicted_position'];
    if (!found || !p || !q) return;
    const seen = window.__prediction;
    seen.draws++;
    const x = Number(found[1]) * devicePixelRatio, y = Number(found[2]) * devicePixelRatio;
    const apart = Math.hypot(p.x - q.x, p.y - q.y) > 1;
    if (apart && Math.abs(x - q.x) < 1e-3 && Math.abs(y - q.y) < 1e-3) seen.predicted++;
    if (apart && Math.abs(x - p.x) < 1e-3 && Math.abs(y - p.y) < 1e-3) seen.plainWhenApart++;
    const ghost = document.querySelector('.predicted[data-predicted-id="card"]');
    if (ghost && !ghost.hidden) seen.ghosts++;
  }).observe(box, { attributes: true, attributeFilter: ['style'] });
  return 'bound';
})()"""


async def check(args, directory):
    log = os.path.join(directory, "motiond.log")
    port = free_port()
    with open(log, "w") as output:
        daemon = subprocess.Popen([args.motiond, "--config", args.config, "--socket", os.path.join(directory, "motiond.sock"),
                                   "--replay", args.recording, "--loop", "--websocket", f"127.0.0.1:{port}"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=output)
    browser = Browser(directory, args.chromium)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
                    break
            except OSError:
                if daemon.poll() is not None or time.monotonic() > end:
                    raise Failure(f"motiond's page did not answer; it said:\n{log_of(log)}")
                await asyncio.sleep(0.1)
        await browser.start()
        await browser.page("Page.enable")
        await browser.page("Page.navigate", {"url": f"http://127.0.0.1:{port}/"})
        end = time.monotonic() + 30
        while await browser.evaluate("document.readyState") != "complete":
            if time.monotonic() > end:
                raise Failure("the live page did not load within 30 s")
            await asyncio.sleep(0.1)
        bound = await browser.page("Runtime.evaluate", {"expression": BIND, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in bound:
            raise Failure(f"binding threw: {bound['exceptionDetails']}")
        # The replay loops: within a play or two the card is dragged while the page watches.
        end = time.monotonic() + 45
        seen = {}
        while time.monotonic() < end:
            seen = await browser.evaluate("window.__prediction") or {}
            if seen.get("predicted", 0) >= 10 and seen.get("ghosts", 0) >= 1:
                break
            await asyncio.sleep(0.2)
        print(json.dumps({"step": "bound", **seen}), flush=True)
    except (Failure, asyncio.TimeoutError, OSError) as error:
        raise Failure(f"{type(error).__name__}: {error}\n--- chromium said:\n{log_of(browser.log, 3000)}\n--- motiond said:\n{log_of(log, 3000)}")
    finally:
        browser.stop()
        daemon.terminate()
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()


if __name__ == "__main__":
    run_check(check, ("motiond", "config", "recording"), "prediction_in_browser", 180)
