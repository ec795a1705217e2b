#!/usr/bin/python3
"""The systemd lab's tests, run by lab.service inside a container whose init is systemd
(scripts/systemd-test boots it): motiond installed as `make install-built` installs it, under
a real systemd. Writes one JSON line per test to OUT/results.jsonl, then powers the container
off. Every wait has a deadline."""

import asyncio
import json
import os
import pwd
import subprocess
import sys
import time
import traceback

# The repository's Python client, as a kiosk's app uses it, and the kernel lab's deadlines.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "KernelLab"))
import motiond  # noqa: E402
from labkit import LabFailure, check, run, wait_until  # noqa: E402

SOCKET = "/run/motiond/motiond.sock"
STEP = 30


def systemctl(*arguments):
    return run(["systemctl", *arguments], seconds=STEP).stdout.strip()


def journal():
    return run(["journalctl", "--no-pager", "-u", "motiond.service", "-u", "motiond.socket", "-n", "40"], seconds=STEP).stdout


def socket_activation():
    """motiond.socket listens; the first client's connection starts motiond.service, which
    runs as its own user, ready (Type=notify) and healthy."""
    check(systemctl("is-active", "motiond.service") == "inactive", f"motiond.service is {systemctl('is-active', 'motiond.service')} before any client")
    check(systemctl("start", "motiond.socket") == "" and systemctl("is-active", "motiond.socket") == "active",
          f"motiond.socket is {systemctl('is-active', 'motiond.socket')}: {journal()}")
    status = os.stat(SOCKET)
    check(oct(status.st_mode & 0o777) == "0o660" and pwd.getpwuid(status.st_uid).pw_name == "motiond",
          f"{SOCKET} is {oct(status.st_mode & 0o777)} owned by {pwd.getpwuid(status.st_uid).pw_name}")
    check(systemctl("is-active", "motiond.service") == "inactive", "motiond.service started before any client")

    async def first_client():
        async with motiond.Client(SOCKET, timeout=STEP) as client:
            return client.hello, await client.health()
    hello, health = asyncio.run(first_client())
    check("streams" in hello, f"the hello: {hello}")
    check(systemctl("is-active", "motiond.service") == "active", f"motiond.service is {systemctl('is-active', 'motiond.service')}: {journal()}")
    pid = int(systemctl("show", "-p", "MainPID", "--value", "motiond.service"))
    user = pwd.getpwuid(os.stat(f"/proc/{pid}").st_uid).pw_name
    check(user == "motiond", f"motiond runs as {user}")
    return f"the first client started motiond.service (pid {pid}, user {user}); health {health.get('status')}"


def restart_keeps_clients_and_scene():
    """`systemctl restart motiond` while a client is connected: the client reconnects by
    itself, its subscription carries on, and the element another client added is still there,
    kept in StateDirectory."""
    run(["systemctl", "start", "motiond.socket"], seconds=STEP)
    states = []

    async def body():
        def heard_state(name):
            return lambda state, detail: states.append(f"{name} {state} {detail}")
        async with motiond.Client(SOCKET, timeout=STEP, first_retry=0.1, max_retry=0.5, on_state=heard_state("watcher")) as watcher, \
                motiond.Client(SOCKET, timeout=STEP, first_retry=0.1, max_retry=0.5, on_state=heard_state("driver")) as driver:
            await driver.add_element({"id": "note", "center": [100, 100], "size": [50, 50], "draggable": {}})
            subscription = watcher.subscribe("note.position")
            await asyncio.wait_for(subscription.ready(), STEP)
            await driver.set("note.position", {"x": 300, "y": 200})
            async def heard(x):
                while True:
                    event = await subscription.get()
                    if event.value == {"x": x, "y": 200}:
                        return event
            await asyncio.wait_for(heard(300), STEP)
            before = int(systemctl("show", "-p", "MainPID", "--value", "motiond.service"))
            connections = watcher.connections
            # The state file is written at a stop (and every state_interval): the restart keeps it.
            result = await asyncio.to_thread(run, ["systemctl", "restart", "motiond.service"], seconds=STEP)
            if result.returncode != 0:
                raise LabFailure(f"systemctl restart: {result.stderr}\n{journal()}")
            after = int(systemctl("show", "-p", "MainPID", "--value", "motiond.service"))
            check(after not in (0, before), f"MainPID {before} before the restart, {after} after")
            deadline = time.monotonic() + STEP
            while watcher.connections == connections or watcher.state != "open" or driver.state != "open":
                if time.monotonic() > deadline:
                    raise LabFailure(f"the clients did not reconnect: {watcher.state}, {driver.state}: {states[-6:]}\n{journal()}")
                await asyncio.sleep(0.05)
            elements = [element["id"] for element in await driver.elements()]
            check("note" in elements, f"after the restart the scene holds {elements}\n{journal()}")
            position = await driver.get("note.position")
            check(position == {"x": 300, "y": 200}, f"note.position is {position} after the restart")
            await driver.set("note.position", {"x": 500, "y": 200})
            await asyncio.wait_for(heard(500), STEP)
            return before, after
    before, after = asyncio.run(body())
    state = os.stat("/var/lib/motiond")
    check(pwd.getpwuid(state.st_uid).pw_name == "motiond" and state.st_mode & 0o777 == 0o750,
          f"/var/lib/motiond is {oct(state.st_mode & 0o777)} owned by {pwd.getpwuid(state.st_uid).pw_name}")
    check(os.path.exists("/var/lib/motiond/scene.json"), f"no scene.json in {os.listdir('/var/lib/motiond')}")
    return f"restarted (pid {before} → {after}); the subscriber reconnected and heard note.position again; note kept in /var/lib/motiond/scene.json"


def reload_keeps_running():
    """`systemctl reload motiond` (ExecReload: SIGHUP) reloads the configuration in place."""
    before = systemctl("show", "-p", "MainPID", "--value", "motiond.service")
    result = run(["systemctl", "reload", "motiond.service"], seconds=STEP)
    check(result.returncode == 0, f"systemctl reload: {result.stderr}\n{journal()}")
    wait_until("motiond to log the reload", lambda: "reload" in journal().lower(), seconds=STEP)
    # systemd says "reloading" from motiond's RELOADING=1 to its READY=1, after the log line.
    wait_until("motiond.service to be active after the reload", lambda: systemctl("is-active", "motiond.service") == "active", seconds=STEP)
    check(systemctl("show", "-p", "MainPID", "--value", "motiond.service") == before, "the reload started a new process")
    return "reloaded in place (same pid), still active"


def security_score():
    """systemd-analyze security on the unit as installed and running: its exposure score."""
    result = run(["systemd-analyze", "security", "--no-pager", "motiond.service"], seconds=STEP)
    last = [line for line in result.stdout.splitlines() if "Overall exposure level" in line]
    check(last, f"systemd-analyze security said: {result.stdout[-500:]} {result.stderr[-500:]}")
    score = float(last[0].split("level for motiond.service:")[1].split()[0])
    check(score <= 2.0, f"exposure {score}: {last[0]}")
    return last[0].strip()


def stopped_then_started_by_a_client():
    """`systemctl stop` ends motiond with a clean exit (no failed state); the socket stays,
    and the next client starts motiond again."""
    run(["systemctl", "start", "motiond.socket"], seconds=STEP)
    result = run(["systemctl", "stop", "motiond.service"], seconds=STEP)
    check(result.returncode == 0, f"systemctl stop: {result.stderr}")
    result = systemctl("show", "-p", "Result", "--value", "motiond.service")
    check(result == "success", f"motiond.service's result at stop: {result}\n{journal()}")
    check(systemctl("is-active", "motiond.socket") == "active", "motiond.socket went with the service")
    check(systemctl("is-active", "motiond.service") == "inactive", f"motiond.service is {systemctl('is-active', 'motiond.service')} after the stop")

    async def next_client():
        async with motiond.Client(SOCKET, timeout=STEP) as client:
            return [element["id"] for element in await client.elements()]
    elements = asyncio.run(next_client())
    check(systemctl("is-active", "motiond.service") == "active", f"motiond.service is {systemctl('is-active', 'motiond.service')}: {journal()}")
    return f"stopped with result success; the next client started it again ({len(elements)} elements)"


TESTS = [socket_activation, restart_keeps_clients_and_scene, reload_keeps_running, security_score, stopped_then_started_by_a_client]


def main(out, names):
    with open(os.path.join(out, "results.jsonl"), "w") as results:
        for test in TESTS:
            name = test.__name__.replace("_", " ")
            if names and name not in names:
                continue
            started = time.monotonic()
            try:
                detail, status = test(), "passed"
            except Exception as error:
                detail = str(error) if isinstance(error, LabFailure) else traceback.format_exc()
                status = "failed"
            results.write(json.dumps({"test": name, "status": status, "seconds": round(time.monotonic() - started, 2), "detail": detail}) + "\n")
            results.flush()
    with open(os.path.join(out, "journal.txt"), "w") as log:
        log.write(run(["journalctl", "--no-pager", "-b"], seconds=STEP).stdout)


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print("\n".join(test.__name__.replace("_", " ") for test in TESTS))
        sys.exit(0)
    try:
        main(sys.argv[1], set(sys.argv[2:]))
    finally:
        subprocess.run(["systemctl", "--no-block", "poweroff"])
