"""The compositor lab's guest, set up once (`Lab`), what it records, and the tests' verdicts.

`Lab` starts motiond, the compositor and Chromium (which takes a minute or more to load the
page under emulation: once a guest), and keeps two panels: the lab's own (the Atmel's axes,
plus contact sizes) and the EP0430M09 for two fingers. `play_all` plays scenarios to one
client: wev in front (`wl_touch`), or the page (`page`); each play records what motiond
published on `screen.contacts` and what the client got.
"""
import os
import time

import session  # noqa: F401 (first: it puts the kernel lab's labkit on the path)
from labkit import LabFailure, Panel, check, device_event, note, wait_until
# cancel_scenarios and judged_scenarios: for complab.py, which takes everything from here.
from scenarios import (TWO_FINGERS, Scenario, cancel_scenarios, judged_scenarios, panel_description,  # noqa: F401
                       rotation_scenario, tap, touches_of_page, touches_of_wev, track_problems, write_events)
from session import HEIGHT, WIDTH, Motiond, Page, WlTouch, start_compositor, tail
from virtual_device import contact_tracks

# A tap in the middle of the output, played until the client in front shows it: the path is
# whole (the compositor took the virtual touchscreen, the client's surface has the output).
PROBE_AT = (400, 240)
PROBE_TRIES = 5
# Within this many pixels of motiond's published positions (the device's unit is a quarter pixel).
TOLERANCE = 1.0


class Lab:
    def __init__(self, kind, out):
        self.kind, self.out = kind, out
        self.booted = float(open("/proc/uptime").read().split()[0])
        self.motiond = Motiond()
        self.client = self.motiond.client
        self.panels = {"lab": self.panel(panel_description()), "two": self.panel(TWO_FINGERS)}
        self.compositor = start_compositor(kind, self.motiond, out)
        self.page = None
        self.open_page()
        self.probe_events = write_events("probe", tap(0, 99, PROBE_AT))
        self.screenshot = None

    def open_page(self):
        """Chromium on the page, if it is not there; once it is ready."""
        for attempt in range(2):
            if self.page is not None:
                break
            page = Page(self.compositor)
            try:
                page.wait_ready()
                self.page = page
            except LabFailure as failure:
                page.close()
                # Once more: on a loaded host a helper process of Chromium's can miss its
                # deadline to connect, and that Chromium never loads the page.
                if attempt == 1:
                    raise
                note(f"Chromium again, after: {str(failure).splitlines()[0]}")
        return self.page

    def fresh(self, transform="0"):
        """The compositor started again with no touch down (one whose cancel it dropped stays
        down in it), and Chromium with it, when next asked for."""
        if self.page:
            self.page.close()
            self.page = None
        self.compositor.restart(transform)

    def panel(self, desc):
        panel = Panel(desc, settle=False)
        self.client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
        return panel

    def timings(self):
        return (f"guest up {self.booted:.0f} s after power-on; {self.compositor.name}'s socket {self.compositor.socket_seconds} s "
                f"after its start; Chromium's page ready {self.page.ready_seconds} s after its start "
                f"({self.page.size['width']} x {self.page.size['height']}, {self.page.ready['touch_points']} touch points)")

    def play(self, scenario):
        """Plays `scenario` on its panel; motiond's published tracks, by contact id in landing order."""
        self.motiond.configure(scenario.snippet, scenario.device)
        self.client.drain()
        self.client.events.clear()
        start = time.monotonic()

        def meanwhile():
            self.client.drain()
            if scenario.during:
                scenario.during(self.client, time.monotonic() - start)
        self.panels[scenario.panel].play(scenario.events, meanwhile=meanwhile)
        wait_until("motiond to publish every finger lifted", lambda: self.client.drain() or self.all_lifted())
        return contact_tracks(self.client.events)

    def all_lifted(self):
        values = [event["value"] for event in self.client.events if event.get("stream") == "screen.contacts"]
        return not values or values[-1] == []

    def play_all(self, target, scenarios):
        """Each scenario played with `target` in front: {name: {"published", "events", "seconds"}}."""
        client = WlTouch(self.compositor) if target == "wl_touch" else self.open_page()
        try:
            self.probe(client, target)
            played = {}
            for scenario in scenarios:
                clock = time.monotonic()
                client.mark()
                published = self.play(scenario)
                events = self.wait_for_client(client, target, scenario, published)
                played[scenario.name] = {"published": published, "events": events, "seconds": time.monotonic() - clock}
                if target == "page" and scenario.name == "drag":
                    client.wait("the page to paint the drag", lambda: any(e["type"] == "painted" for e in client.events()))
                    self.screendump(f"{self.kind}-page-after-drag")
            return played
        finally:
            if target == "wl_touch":
                client.close()

    def touches(self, client, target):
        events = client.events()
        return touches_of_wev(events)[0] if target == "wl_touch" else touches_of_page(events)

    def probe(self, client, target):
        """Taps until the client in front shows a whole touch (the first tap after a client
        came to the front may go to the one before it): fails after PROBE_TRIES."""
        for attempt in range(PROBE_TRIES):
            client.mark()
            self.play(Scenario("probe", self.probe_events))
            def shown():
                # On the page, the tap's click too: it comes after the touchend, and belongs to the probe.
                ended = any(t["end"] for t in self.touches(client, target))
                return ended and (target == "wl_touch" or any(e["type"] == "click" for e in client.events()))
            try:
                wait_until(f"{target} to show the probe tap", shown, seconds=10)
                return
            except LabFailure:
                note(f"{target} did not show probe tap {attempt + 1}")
        raise LabFailure(f"{target} showed none of {PROBE_TRIES} taps; {self.compositor.name}'s log ended:\n"
                         f"{tail(self.compositor.log_path)}\nmotiond's log ended:\n{self.motiond.log_tail()}")

    def wait_for_client(self, client, target, scenario, published):
        """The client's events once the scenario's touches ended there (every published
        contact's; with a `final` touch, the last to land), or at the deadline: what came."""
        tracks = list(published.values())
        if not tracks:
            return client.events()
        last = tracks[-1][0]

        def landed_last(touch):
            return max(abs(touch["positions"][0][0] - last[0]), abs(touch["positions"][0][1] - last[1])) <= 2

        def clicked():
            # Chromium dispatches a tap's click after its touchend: the record waits for it,
            # or it would count in the next case's (bounded by the wait's deadline: a tap that
            # does not click is what the cancel cases look for).
            return any(event["type"] == "click" and max(abs(event["x"] - last[0]), abs(event["y"] - last[1])) <= 2
                       for event in client.events())

        def ended():
            touches = self.touches(client, target)
            if scenario.final:
                return any(touch["end"] and landed_last(touch) for touch in touches) and (target != "page" or clicked())
            return sum(1 for touch in touches if touch["end"]) >= len(tracks)
        try:
            wait_until(f"{target} to show the touches of {scenario.name} end", ended, seconds=scenario.settle)
        except LabFailure:
            note(f"{target} never showed the touches of {scenario.name} end")
        return client.events()

    def screendump(self, name):
        """Asks the host (scripts/compositor-test, through QEMU's monitor) for a picture of
        the screen, OUT/NAME.png: the page after a touch."""
        request = os.path.join(self.out, "screendump.request")
        done = os.path.join(self.out, f"{name}.done")
        with open(request + ".new", "w") as out:
            out.write(name)
        os.replace(request + ".new", request)
        try:
            wait_until("the host's screendump", lambda: os.path.exists(done), seconds=30)
            self.screenshot = f"{name}.png"
        except LabFailure:
            note("the host made no screendump (run without scripts/compositor-test's monitor?)")

    def close(self):
        if self.page:
            self.page.close()
        self.compositor.stop()
        for panel in self.panels.values():
            panel.remove()
        self.motiond.stop()


# --- Verdicts -----------------------------------------------------------------------------------

def judge(scenario, records):
    """A judged scenario: on each client, one touch for each contact motiond published and
    let through (a contact that began on the claiming element is not), at the published
    pixels within TOLERANCE, ended by a lift, every wl_touch event followed by a frame."""
    problems, said = [], []
    for target, (played, failure, _) in records.items():
        if failure:
            problems.append(f"{target}: {failure}")
            continue
        record = played[scenario.name]
        tracks = list(record["published"].values())
        if scenario.name == "claimed touch":
            tracks = tracks[1:]  # the first began on the element: motiond's alone
        note_ups = ""
        if target == "wl_touch":
            touches, unframed, ups = touches_of_wev(record["events"])
            if unframed:
                problems.append(f"wl_touch: {unframed} down or motion events with no wl_touch.frame after them")
            # weston 10 sends none after the last finger's up (the touch has no focus then).
            note_ups = ", the last up with no frame after it" if ups else ""
        else:
            touches = touches_of_page(record["events"])
        if len(touches) != len(tracks):
            problems.append(f"{target}: {len(touches)} touches, motiond let {len(tracks)} through: {summary(touches)}")
            continue
        for index, (touch, track) in enumerate(zip(touches, tracks)):
            why = track_problems(touch["positions"], track, TOLERANCE)
            if why or touch["end"] != "up":
                problems.append(f"{target}: touch {index}: {why or 'ended ' + str(touch['end'])}")
        said.append(f"{target} {len(touches)} touch(es), {sum(len(t['positions']) for t in touches)} positions{note_ups}")
    check(not problems, "\n".join(problems))
    return "; ".join(said) + f", all within {TOLERANCE} px of screen.contacts"


def summary(touches):
    return "; ".join(f"{t['id']}: {t['positions'][0]}…{t['positions'][-1]} ({len(t['positions'])}) {t['end']}" for t in touches)


def cancel_table(kind, scenarios, records):
    """What each client got for each cancel case, as a table, judged: with motiond's default
    (`cancel = "withdraw"`) no client is left with a touch down, the page gets no click and no
    contextmenu but the next tap's click, and the next tap arrives (and, on the page, clicks)."""
    rows = [f"{kind}: case | client | touches (landing … last position, positions, ending) | click/contextmenu | "
            "left down | the next tap"]
    problems = []
    wrong = []
    for scenario in scenarios:
        for target, (played, failure, _) in records.items():
            if failure or scenario.name not in played:
                if f"{target}: {failure}" not in problems:
                    problems.append(f"{target}: {failure}")
                continue
            record = played[scenario.name]
            final = list(record["published"].values())[-1][0] if record["published"] else None
            if target == "wl_touch":
                touches, unframed, _ = touches_of_wev(record["events"])
                clicks = "-"
            else:
                touches, unframed = touches_of_page(record["events"]), 0
                clicks = ", ".join(f"{e['type']} at {e['x']:.0f},{e['y']:.0f}" for e in record["events"]
                                   if e["type"] in ("click", "contextmenu")) or "none"
            left_down = sum(1 for t in touches if t["end"] is None)
            next_tap = next((t for t in touches if final and max(abs(t["positions"][0][0] - final[0]),
                                                                  abs(t["positions"][0][1] - final[1])) <= 2), None)
            tap_said = "never arrived" if next_tap is None else f"arrived, ended {next_tap['end']}"
            if target == "page" and final:
                clicked = any(e["type"] == "click" and abs(e["x"] - final[0]) <= 2 and abs(e["y"] - final[1]) <= 2
                              for e in record["events"])
                tap_said += ", clicked" if clicked else ", no click"
                others = [e for e in record["events"] if e["type"] == "contextmenu"
                          or (e["type"] == "click" and not (abs(e["x"] - final[0]) <= 2 and abs(e["y"] - final[1]) <= 2))]
                if others or not clicked:
                    wrong.append(f"{scenario.name} | page: " + (f"{', '.join(e['type'] + ' at ' + format(e['x'], '.0f') + ',' + format(e['y'], '.0f') for e in others)}; " if others else "")
                                 + ("" if clicked else "the next tap did not click"))
            if left_down or next_tap is None:
                wrong.append(f"{scenario.name} | {target}: {left_down} left down; the next tap {tap_said}")
            rows.append(f"{scenario.name} | {target} | {summary(touches)}{f' ({unframed} unframed)' if unframed else ''} | "
                        f"{clicks} | {left_down} | {tap_said}")
    check(not problems, "\n".join(problems))
    check(not wrong, "a touch motiond took away did harm:\n" + "\n".join(wrong) + "\n" + "\n".join(rows))
    return "\n".join(rows)


# --- The rotated output ---------------------------------------------------------------------------

# Where a point of the device (its position as a fraction of the output's width and height,
# x and y) lands in a client's surface (as a fraction of the surface's width and height):
# the eight turns and flips, by their formula.
MAPPINGS = {
    "as is (u=x, v=y)": lambda x, y: (x, y),
    "u=1-x, v=y": lambda x, y: (1 - x, y),
    "u=x, v=1-y": lambda x, y: (x, 1 - y),
    "u=1-x, v=1-y": lambda x, y: (1 - x, 1 - y),
    "u=y, v=x": lambda x, y: (y, x),
    "u=1-y, v=x": lambda x, y: (1 - y, x),
    "u=y, v=1-x": lambda x, y: (y, 1 - x),
    "u=1-y, v=1-x": lambda x, y: (1 - y, 1 - x),
}
TRANSFORMS = ("90", "180", "270", "flipped")


# The configuration's `transform` for an output the compositor turns so: named as weston names
# the turn, which sway turns the other way for a quarter turn (docs/virtual-touchscreen.md).
MOTIOND_TRANSFORM = {
    "weston": {"90": "90", "180": "180", "270": "270", "flipped": "flipped"},
    "sway": {"90": "270", "180": "180", "270": "90", "flipped": "flipped"},
}


def rotated_output(lab, expected=None):
    """For each transform of the output, motiond told of it (`[[virtual_touchscreen]]
    transform`, its `[screen]` the turned picture): two taps land in wev's surface under the
    finger, within TOLERANCE of where motiond published them (the mapping found is then "as
    is"). `expected` ({transform: mapping name}) asks for other mappings instead."""
    scenario = rotation_scenario()
    found, rows = {}, [f"{lab.kind}: output transform | motiond's transform | surface | published (px) → wl_touch | mapping"]
    try:
        for transform in TRANSFORMS:
            try:
                lab.motiond.turn(MOTIOND_TRANSFORM[lab.kind][transform], quarter=transform in ("90", "270"))
                found[transform], row = rotated_once(lab, scenario, transform, turned=True)
            except LabFailure as failure:
                found[transform], row = None, f"not recorded: {failure}"
            rows.append(f"{transform} | {MOTIOND_TRANSFORM[lab.kind][transform]} | {row}")
    finally:
        lab.motiond.turn(None)
        lab.fresh()
    check(all(found.values()), "\n".join(rows))
    expected = expected or {transform: "as is (u=x, v=y)" for transform in TRANSFORMS}
    wrong = {transform: found.get(transform) for transform in expected if found.get(transform) != expected[transform]}
    check(not wrong, f"mappings found {wrong}, expected {expected}\n" + "\n".join(rows))
    return "\n".join(rows)


def rotated_once(lab, scenario, transform, turned=False):
    """The mapping under one transform, and its row of the table. `turned`: motiond's
    `[screen]` is the turned picture, so its points are fractions of that."""
    lab.fresh(transform)
    played = lab.play_all("wl_touch", [scenario])[scenario.name]
    touches = touches_of_wev(played["events"])[0]
    points = [track[0] for track in played["published"].values()]
    check(len(touches) == len(points) == 2, f"{len(touches)} touches for {len(points)} published: {summary(touches)}")
    width, height = (HEIGHT, WIDTH) if transform in ("90", "270") else (WIDTH, HEIGHT)
    landed = [touch["positions"][0] for touch in touches]

    screen = (width, height) if turned else (WIDTH, HEIGHT)

    def maps(mapping):
        return all(abs(mapping(x / screen[0], y / screen[1])[0] * width - u) <= TOLERANCE
                   and abs(mapping(x / screen[0], y / screen[1])[1] * height - v) <= TOLERANCE
                   for (x, y), (u, v) in zip(points, landed))
    name = next((name for name, mapping in MAPPINGS.items() if maps(mapping)), "none of the eight")
    pairs = ", ".join(f"{x:.0f},{y:.0f} → {u:.0f},{v:.0f}" for (x, y), (u, v) in zip(points, landed))
    return name, f"{width} x {height} | {pairs} | {name}"
