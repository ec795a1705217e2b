"""What the compositor lab's tests run in: motiond with a virtual touchscreen for the guest's
one output, a real Wayland compositor reading it with libinput (weston 10 with kiosk-shell, or
sway 1.7 under seatd as a user), and two clients: `wev`, which prints every Wayland event it
gets (`WlTouch` makes its wl_touch lines JSON), and Chromium on page.html (`Page`).

The kernel lab's labkit gives the panel, its player, motiond and the socket client; every wait
here has a deadline too, and a compositor or browser that hangs fails the test with its log.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "KernelLab"))
from labkit import (DRAG, MOTIONCTL, SCRATCH, STEP, Client, Daemon, LabFailure, check, note, run,  # noqa: E402
                    settle_udev, start, stop_process, wait_until, write_config)

OUTPUT = "Virtual-1"
WIDTH, HEIGHT = 1280, 800
VIRTUAL_NAME = f"motiond virtual touchscreen {OUTPUT}"
# The guest's unprivileged user: sway refuses root, and seatd opens the devices for it.
USER, UID, GID = "nobody", 65534, 65534
# Chromium loads the page in 40-90 s under TCG on a busy host: far past that, it hung.
PAGE_DEADLINE = 240

# Written by the guest once it has read Chromium's files into its memory.
CHROMIUM_READ = "/tmp/chromium-read"
STALLED = "Network service crashed"

# The lab's own panel: the Atmel maXTouch's description (800 x 480 units, MT_TOOL_TYPE) with a
# contact size axis (ABS_MT_TOUCH_MAJOR, 0-255) added for the palm case, under a name of its own.
PANEL_NAME = "complab panel"


def panel_description():
    """The lab panel's evemu description, written to SCRATCH from the Atmel recording's header."""
    path = os.path.join(SCRATCH, "complab-panel.desc")
    lines = []
    with open(DRAG) as source:
        for line in source:
            if line.startswith("E:") or line.startswith("#"):
                continue
            if line.startswith("N:"):
                line = f"N: {PANEL_NAME}\n"
            elif line.startswith("B: 03"):
                # ABS_MT_TOUCH_MAJOR (0x30) is bit 0 of the abs bitmask's seventh byte (fields[2] is the first).
                fields = line.split()
                fields[8] = f"{int(fields[8], 16) | 0x01:02x}"
                line = " ".join(fields) + "\n"
            elif line.startswith("A: 2f"):
                line += "A: 30 0 255 0 0 0\n"
            lines.append(line)
    with open(path, "w") as out:
        out.writelines(["# EVEMU 1.3\n"] + lines)
    return path


BASE_CONFIG = f"""
[screen]
width = {WIDTH}
height = {HEIGHT}

# The lab's panel: 200 x 120 mm, contact sizes in quarter millimetres, so that the palm
# (30 mm) and jump (50 mm) filters work in millimetres.
[[device]]
name = "{PANEL_NAME}"
size_mm = [200, 120]
touch_resolution = 4
virtual_touchscreen = "{OUTPUT}"

[[device]]
name = "*"
virtual_touchscreen = "{OUTPUT}"

# A touch that begins here is motiond's alone (claim_touches, true by default).
[[element]]
id = "claimer"
center = [100, 100]
size = [200, 200]
"""


# Where a case's lines for the lab panel's [[device]] table go.
DEVICE_LINES = "touch_resolution = 4\n"


class Motiond:
    """motiond on BASE_CONFIG plus a case's snippet, with the WL_OUTPUT rule `motionctl config
    mapping --install` writes, as a user sets it up; `configure` reloads with another snippet."""

    def __init__(self):
        self.path = write_config("complab.toml", BASE_CONFIG)
        self.base, self.settings = BASE_CONFIG, ("", "")
        mapping = run([MOTIONCTL, "config", "mapping", self.path])
        check(mapping.returncode == 0, f"motionctl config mapping failed: {mapping.stderr}")
        self.sway_input = next((line.strip() for line in mapping.stdout.splitlines() if line.strip().startswith("input ")), None)
        check(self.sway_input, f"motionctl config mapping printed no sway input line:\n{mapping.stdout}")
        installed = run([MOTIONCTL, "config", "mapping", self.path, "--install"])
        check(installed.returncode == 0, f"motionctl config mapping --install failed: {installed.stderr}")
        run(["udevadm", "control", "--reload-rules"])
        self.daemon = Daemon([], name="complab", config=self.path, tracked=False)
        self.client = Client(self.daemon.socket)
        self.client.request("subscribe", streams=["screen.contacts"])
        self.node = wait_until("the virtual touchscreen in health", self.virtual_node)
        settle_udev()
        udev = run(["udevadm", "info", "--query=property", "--name", self.node]).stdout
        check(f"WL_OUTPUT={OUTPUT}" in udev, f"udev did not set WL_OUTPUT on {self.node}:\n{udev}")

    def virtual_node(self):
        entries = self.client.request("health").get("virtual_touchscreens", [])
        entry = next((entry for entry in entries if entry.get("output") == OUTPUT), None)
        check(entry is None or "error" not in entry, f"motiond did not make the virtual touchscreen: {entry}")
        return entry and entry.get("node")

    def configure(self, snippet, device=""):
        """BASE_CONFIG plus `snippet` (a case's settings) and `device` (lines for the lab
        panel's own table), reloaded if they differ."""
        if (snippet, device) == self.settings:
            return
        write_config("complab.toml", self.text(self.base, (snippet, device)))
        try:
            self.client.request("reload")
        except LabFailure as failure:
            raise LabFailure(f"{failure}\nmotiond's log ended:\n{self.log_tail()}") from None
        self.settings = (snippet, device)

    def turn(self, transform, quarter=False):
        """The output turned by the compositor, as the configuration tells motiond: `transform`
        in the virtual touchscreen's table, the `[screen]` the turned picture (its sides
        swapped by a `quarter` turn); None turns back. The device is made anew by the reload;
        then udev's WL_OUTPUT on it."""
        base = BASE_CONFIG
        if transform is not None:
            if quarter:
                base = base.replace(f"width = {WIDTH}\nheight = {HEIGHT}\n", f"width = {HEIGHT}\nheight = {WIDTH}\n", 1)
            base += f'\n[[virtual_touchscreen]]\noutput = "{OUTPUT}"\ntransform = "{transform}"\n'
        if base == self.base:
            return
        self.base = base
        write_config("complab.toml", self.text(self.base, self.settings))
        # The reload makes the device anew before it answers (the kernel may give it the old
        # device's node again).
        try:
            self.client.request("reload")
        except LabFailure as failure:
            raise LabFailure(f"{failure}\nmotiond's log ended:\n{self.log_tail()}") from None
        self.node = wait_until("the virtual touchscreen made anew", self.virtual_node)
        settle_udev()
        udev = run(["udevadm", "info", "--query=property", "--name", self.node]).stdout
        check(f"WL_OUTPUT={OUTPUT}" in udev, f"udev did not set WL_OUTPUT on {self.node}:\n{udev}")

    @staticmethod
    def text(base, settings):
        """The configuration: `base` with a case's (settings, lines for the lab panel)."""
        snippet, device = settings
        return base.replace(DEVICE_LINES, DEVICE_LINES + device, 1) + snippet

    def log_tail(self):
        return self.daemon.log_text()[-2000:]

    def stop(self):
        self.client.close()
        self.daemon.stop()


def as_user(user, arguments):
    """`arguments` run as `user` (None: root, as is)."""
    if user is None:
        return arguments
    return ["setpriv", f"--reuid={UID}", f"--regid={GID}", "--clear-groups", "--"] + arguments


def tail(path, lines=25):
    try:
        with open(path, errors="replace") as source:
            return "\n".join(source.read().splitlines()[-lines:])
    except OSError as error:
        return f"({path}: {error})"


class Compositor:
    """A compositor on the guest's DRM output; `client` starts a Wayland client in it."""
    name = None
    user = None
    started = {}  # clients started, by log name

    def __init__(self, motiond, out):
        self.motiond, self.out = motiond, out
        self.runtime = os.path.join(SCRATCH, f"xdg-{self.name}")
        self.home = os.path.join(SCRATCH, f"home-{self.name}")
        for folder in (self.runtime, self.home):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            os.chown(folder, UID if self.user else 0, GID if self.user else 0)
        self.log_path = os.path.join(out, f"{self.name}.log")
        self.process = None
        self.display = None

    def environment(self):
        return dict(os.environ, HOME=self.home, XDG_RUNTIME_DIR=self.runtime)

    def wait_ready(self, started):
        """Its Wayland socket, then libinput's word that it took the virtual touchscreen."""
        def socket():
            check(self.process.poll() is None, f"{self.name} exited with {self.process.returncode}:\n{tail(self.log_path)}")
            sockets = [path for path in glob.glob(os.path.join(self.runtime, "wayland-*")) if not path.endswith(".lock")]
            return sockets and os.path.basename(sockets[0])
        try:
            self.display = wait_until(f"{self.name}'s Wayland socket", socket)
            self.socket_seconds = round(time.monotonic() - started, 1)
            wait_until(f"{self.name} to take {VIRTUAL_NAME}", self.has_device)
        except LabFailure as failure:
            raise LabFailure(f"{failure}\n{self.name}'s log ended:\n{tail(self.log_path)}") from None
        note(f"{self.name} ready on {self.display} after {self.socket_seconds} s")

    def client(self, arguments, log_name):
        """A Wayland client of this compositor, as its user, its output in OUT/log_name-N.txt
        (N counting the clients of that name, for the run's record)."""
        Compositor.started[log_name] = Compositor.started.get(log_name, 0) + 1
        log = open(os.path.join(self.out, f"{log_name}-{Compositor.started[log_name]}.txt"), "w")
        os.chmod(log.name, 0o666)
        environment = dict(self.environment(), WAYLAND_DISPLAY=self.display)
        return start(as_user(self.user, arguments), stdout=log, stderr=subprocess.STDOUT, env=environment), log.name

    def stop(self):
        if self.process:
            stop_process(self.process)
            self.process = None

    def restart(self, transform="0"):
        """Started again, its output turned by `transform` (0, 90, 180, 270 or flipped): a
        compositor reads the transform at start here, and starts with no touch left down."""
        self.stop()
        self.start(transform)

    # Whether `turn` turns the output while the compositor runs (weston reads it at start).
    turns_live = False

    def turn(self, transform):
        raise NotImplementedError(f"{self.name} turns its output only as it starts (restart)")


class Weston(Compositor):
    """weston 10 as root on a VT (it has no libseat), kiosk-shell: each new window fills the output."""
    name = "weston"

    TRANSFORMS = {"0": "normal", "90": "rotate-90", "180": "rotate-180", "270": "rotate-270", "flipped": "flipped"}

    def start(self, transform="0"):
        ini = write_config("weston.ini", f"[core]\nidle-time=0\n\n[output]\nname={OUTPUT}\ntransform={self.TRANSFORMS[transform]}\n")
        for path in glob.glob(os.path.join(self.runtime, "wayland-*")):
            os.unlink(path)
        started = time.monotonic()
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(["weston", "--tty=2", "--backend=drm-backend.so", "--shell=kiosk-shell.so", "--use-pixman",
                                         "-S", "wayland-1", f"--config={ini}"], stdout=log, stderr=subprocess.STDOUT,
                                        env=self.environment())
        self.wait_ready(started)

    def has_device(self):
        with open(self.log_path, errors="replace") as log:
            return VIRTUAL_NAME in log.read()



class Sway(Compositor):
    """sway 1.7 as an unprivileged user, seatd opening the DRM and input devices for it."""
    name = "sway"
    user = USER

    def start(self, transform="0"):
        self.seatd = start(["seatd", "-u", USER], stdout=open(os.path.join(self.out, "seatd.log"), "w"), stderr=subprocess.STDOUT)
        wait_until("seatd's socket", lambda: os.path.exists("/run/seatd.sock"))
        config = write_config("sway.config", "\n".join([
            "default_border none", "default_floating_border none", "hide_edge_borders both",
            f"output {OUTPUT} mode {WIDTH}x{HEIGHT} position 0 0 transform {'normal' if transform == '0' else transform}",
            # The line `motionctl config mapping` prints for the virtual touchscreen.
            self.motiond.sway_input,
            # Chromium stays on workspace 1 while wev has a workspace of its own.
            'assign [app_id="(?i)chromium"] workspace 1',
            'assign [app_id="wev"] workspace 2', ""]))
        started = time.monotonic()
        environment = dict(self.environment(), WLR_BACKENDS="drm,libinput", WLR_RENDERER="pixman", LIBSEAT_BACKEND="seatd")
        self.process = subprocess.Popen(as_user(USER, ["sway", "-c", config]), stdout=open(self.log_path, "a"),
                                        stderr=subprocess.STDOUT, env=environment)
        self.wait_ready(started)

    def swaymsg(self, *arguments):
        sockets = glob.glob(os.path.join(self.runtime, "sway-ipc.*.sock"))
        check(sockets, f"sway has no IPC socket in {self.runtime}")
        return run(as_user(USER, ["swaymsg", "-s", sockets[0]] + list(arguments)), env=self.environment())

    def has_device(self):
        if not glob.glob(os.path.join(self.runtime, "sway-ipc.*.sock")):
            return False
        return VIRTUAL_NAME in self.swaymsg("-t", "get_inputs").stdout

    def show(self, workspace):
        self.swaymsg("workspace", str(workspace))

    turns_live = True

    def turn(self, transform):
        """sway turns an output while it runs (`output NAME transform`): a start of sway under
        emulation takes some 19 s, five of them made the rotated output the lab's longest case."""
        self.swaymsg("output", OUTPUT, "transform", "normal" if transform == "0" else transform)

    def stop(self):
        super().stop()
        stop_process(self.seatd)


def start_compositor(kind, motiond, out):
    compositor = {"weston": Weston, "sway": Sway}[kind](motiond, out)
    compositor.start()
    return compositor


# --- wev: the wl_touch events a client gets --------------------------------------------------

WEV_LINE = re.compile(r"\[\s*\d+:\s*wl_touch\] (down|motion|up|cancel|frame)(?::(.*))?$")


def parse_wev(text):
    """wev's wl_touch lines as JSON-able dicts: {"event", "id"?, "x"?, "y"?, "time"?}."""
    events = []
    for line in text.splitlines():
        match = WEV_LINE.search(line.strip())
        if not match:
            continue
        event = {"event": match.group(1)}
        for field in (match.group(2) or "").split(";"):
            key, _, value = field.strip().partition(": ")
            if key in ("id", "time", "serial"):
                event[key] = int(value)
            elif key == "x, y":
                x, y = value.split(",")
                event["x"], event["y"] = float(x), float(y)
        events.append(event)
    return events


class WlTouch:
    """wev in the compositor, its window filling the output: the wl_touch events it got."""

    def __init__(self, compositor):
        self.compositor = compositor
        if isinstance(compositor, Sway):
            compositor.show(2)
        self.process, self.path = compositor.client(["stdbuf", "-oL", "wev"], "wev")
        self.since = 0
        # In front: the compositor configured its window active (wev prints the states).
        try:
            self.wait("wev's window to be active", lambda: "activated" in self.text())
        except LabFailure:
            self.close()
            raise

    def text(self):
        with open(self.path, errors="replace") as source:
            source.seek(self.since)
            return source.read()

    def wait(self, what, predicate, seconds=STEP):
        try:
            return wait_until(what, lambda: self.alive() and predicate())
        except LabFailure as failure:
            raise LabFailure(f"{failure}\nwev said:\n{tail(self.path)}\n{self.compositor.name}'s log ended:\n"
                             f"{tail(self.compositor.log_path)}") from None

    def alive(self):
        check(self.process.poll() is None, f"wev exited with {self.process.returncode}:\n{tail(self.path)}")
        return True

    def mark(self):
        self.since = os.path.getsize(self.path)

    def events(self):
        return parse_wev(self.text())

    def close(self):
        """Ends wev, its wl_touch events kept as JSON beside its output (wev-N.json)."""
        stop_process(self.process)
        with open(os.path.splitext(self.path)[0] + ".json", "w") as out:
            with open(self.path, errors="replace") as source:
                json.dump(parse_wev(source.read()), out, indent=0)
        if isinstance(self.compositor, Sway):
            self.compositor.show(1)


# --- Chromium on page.html ---------------------------------------------------------------------

class Page:
    """Chromium in kiosk mode on page.html, started once a guest; `events` are the JSON objects
    the page logged since `mark`."""

    def __init__(self, compositor):
        self.compositor = compositor
        page = os.path.join(SCRATCH, "page.html")
        shutil.copy(os.path.join(HERE, "page.html"), page)
        os.chmod(page, 0o644)
        data = os.path.join(compositor.home, "chromium")
        # The guest reads Chromium's files into memory as it boots (Tests/CompositorLab/guest).
        wait_until("Chromium's files read into the guest's memory", lambda: os.path.exists(CHROMIUM_READ), seconds=4 * STEP)
        self.started = time.monotonic()
        self.process, self.path = compositor.client(
            # A kiosk's own flags (docs/kiosk.md): without them the bundled five-finger
            # recording pinch-zoomed the page, and every later touch landed 6% off.
            ["chromium", "--ozone-platform=wayland", "--kiosk", "--disable-pinch", "--overscroll-history-navigation=0",
             "--no-sandbox", "--no-first-run", "--disable-gpu",
             "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0", f"--user-data-dir={data}",
             # Nothing in the background: under emulation on a busy host, Chromium's helper
             # processes otherwise miss its 15 s to connect and the page never loads. Nor is
             # that enough in sway's guest, where the browser took half a minute to map its
             # window: each helper waits two minutes for it (the switch Chromium's own test
             # runners give a slow machine; the browser hands it to every child process).
             "--ipc-connection-timeout=120",
             "--disable-background-networking", "--disable-component-update", "--disable-extensions", "--disable-sync",
             "--disable-default-apps", "--no-default-browser-check", "--disable-features=Translate,MediaRouter,OptimizationHints",
             f"file://{page}"], "chromium")
        self.since = 0
        self.ready = None

    def wait_ready(self):
        def loaded():
            # A helper process that missed its 15 s to connect: this Chromium never loads the page.
            check(STALLED not in self.text(), f"Chromium said: {STALLED}")
            return next((e for e in self.events() if e["type"] == "ready"), None)
        ready = self.wait("Chromium to load page.html", loaded, PAGE_DEADLINE)
        self.ready_seconds = round(time.monotonic() - self.started, 1)

        def sized():
            size = [e for e in self.events() if e["type"] in ("ready", "size")][-1]
            return (size["width"], size["height"], size["ratio"]) == (WIDTH, HEIGHT, 1)
        try:
            self.wait(f"the page to fill the output, {WIDTH} x {HEIGHT} at ratio 1", sized)
        except LabFailure as failure:
            sizes = [(e["width"], e["height"], e["ratio"]) for e in self.events() if e["type"] in ("ready", "size")]
            raise LabFailure(f"the page's sizes were {sizes}: {failure}") from None
        self.ready = ready
        self.size = [e for e in self.events() if e["type"] in ("ready", "size")][-1]
        return ready

    def text(self, whole=False):
        with open(self.path, errors="replace") as source:
            source.seek(0 if whole else self.since)
            return source.read()

    def events(self, whole=False):
        """The page's events since `mark` (or since it started, `whole`)."""
        events = []
        for line in self.text(whole).splitlines():
            start_at = line.find("complab {")
            end_at = line.rfind("}")
            if start_at >= 0 and end_at > start_at:
                try:
                    events.append(json.loads(line[start_at + len("complab "):end_at + 1]))
                except ValueError:
                    pass
        return events

    def mark(self):
        self.since = os.path.getsize(self.path)

    def wait(self, what, predicate, seconds=STEP):
        def alive_and():
            check(self.process.poll() is None, f"Chromium exited with {self.process.returncode}")
            return predicate()
        try:
            return wait_until(what, alive_and, seconds)
        except LabFailure as failure:
            raise LabFailure(f"{failure}\nChromium's log ended:\n{tail(self.path)}\n{self.compositor.name}'s log ended:\n"
                             f"{tail(self.compositor.log_path)}") from None

    def close(self):
        stop_process(self.process)
