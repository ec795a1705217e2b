"""Every bundled recording, played on a panel of its own, through motiond and the compositor to
the page (each compositor every other one, `recordings_for`): each touch motiond shows reaches the page as touchstart…touchend at motiond's pixels.

The recordings are the real ones of Tests/Fixtures/recordings (prepared as the kernel lab plays
them: fuzz 0, so the kernel passes every value on), at their own pace. Two hops are judged:

- motiond's: what it published on `screen.contacts` against what its virtual touchscreen showed,
  read from the device's node as the compositor reads it. The touches shown, paired with the
  contacts in landing order, follow each contact's positions within TOLERANCE. A contact that
  begins on the claiming element is motiond's alone and is not shown; one motiond stops
  publishing while its finger is still down (a filter's cancel) is shown withdrawn: its track,
  the withdrawal's slide of at most 48 px, a lift.
- the compositor's and Chromium's: the page's touches against the touches shown, each at the
  same positions (a page gets fewer moves than were shown: Chromium sends at most one
  touchmove a frame), lifted as they were.

When the kernel dropped the panel's events because motiond read them too late (SYN_DROPPED:
the emulated guest, its one CPU mostly Chromium's, stalls now and again on a loaded machine),
motiond cancels the contacts the drop lost, and its virtual touchscreen withdraws them and lands
the fingers that came meanwhile late, where they are then (VirtualTouchEncoder). When, then, the
touches shown are not the contacts one for one, motiond's hop is judged only so far as every
touch shown landing on a published contact's track, and the table says so; the page is judged
against what was shown all the same. (In the lab the Wacom's ten fingers see a few drops a run
even on an idle machine, most often harmless.)
"""
import glob
import math
import os
import subprocess
import time

from labkit import SCRATCH, STEP, LabFailure, Panel, check, device_event, note, start, stop_process, wait_until
from preparing import prepare_recording, recording_files
from scenarios import distance_to_segment, touches_of_page, track_problems
from session import HEIGHT, OUTPUT, WIDTH
from virtual_device import UNITS_PER_PIXEL, contact_tracks

RECORDINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "recordings")
TOLERANCE = 1.0
CLAIMER = (0, 0, 200, 200)  # the lab configuration's claiming element, x, y, width, height in pixels
WITHDRAWAL_SLIDE = 48.0


def bundled():
    """The real recordings: the evemu files, and the .events files with their device beside them."""
    paths = sorted(glob.glob(os.path.join(RECORDINGS, "*.evemu")))
    paths += [path for path in sorted(glob.glob(os.path.join(RECORDINGS, "*.events"))) if os.path.exists(recording_files(path)[0])]
    return paths


def on_output(position):
    """A published position as the virtual touchscreen can show it: held on the output."""
    return (min(max(position[0], 0), WIDTH - 0.25), min(max(position[1], 0), HEIGHT - 0.25))


def claimed(track):
    x, y, width, height = CLAIMER
    return x <= track[0][0] < x + width and y <= track[0][1] < y + height


class ShownTouches:
    """The virtual touchscreen as a compositor reads it: `evemu-record` on its node (a reader
    of its own, woken by each frame, so that it keeps up where the lab's Python would not),
    line-buffered into a file; `read` reads the file as frames and touches."""

    ABS, SYN = "0003", "0000"
    MT_SLOT, MT_TOOL, MT_X, MT_Y, MT_ID = "002f", "0037", "0035", "0036", "0039"
    PALM = 2

    def __init__(self, node):
        self.path = os.path.join(SCRATCH, "shown.evemu")
        with open(self.path, "w") as out:
            self.process = start(["stdbuf", "-oL", "evemu-record", node], stdout=out, stderr=subprocess.STDOUT)
        # Its description comes first, once it has the node open.
        wait_until(f"evemu-record to open {node}", lambda: "# Input device name" in self.text() and "\nB:" in self.text())
        check(self.process.poll() is None, f"evemu-record {node} exited: {self.text()}")

    def text(self):
        with open(self.path, errors="replace") as source:
            return source.read()

    def read(self):
        """(how many frames it has read, the touches shown): each touch in landing order, its
        positions (pixels, a unit being a quarter of one), and how it ended: "up", "cancel"
        (released as a palm: a cancel to libinput), or None while it is down. Only whole
        lines are read (evemu-record may be writing the last). A frame the kernel dropped for
        this reader fails the test."""
        text = self.text()
        frames, touches, down, selected, at, tool = 0, [], {}, 0, {}, {}
        for line in text[:text.rfind("\n") + 1].splitlines():
            if not line.startswith("E:"):
                continue
            _, _, kind, code, value = line.split("#")[0].split()
            value = int(value)
            check((kind, code) != (self.SYN, "0003"), "the kernel dropped the virtual touchscreen's events for evemu-record")
            if kind == self.SYN and code == "0000":
                frames += 1
                for slot, touch in down.items():
                    position = (at[slot][0] / UNITS_PER_PIXEL, at[slot][1] / UNITS_PER_PIXEL)
                    if touch["positions"][-1:] != [position]:
                        touch["positions"].append(position)
            elif kind != self.ABS:
                continue
            elif code == self.MT_SLOT:
                selected = value
            elif code == self.MT_TOOL:
                tool[selected] = value
            elif code in (self.MT_X, self.MT_Y):
                position = at.setdefault(selected, [0, 0])
                position[0 if code == self.MT_X else 1] = value
            elif code == self.MT_ID and value >= 0:
                down[selected] = {"positions": [], "end": None}
                touches.append(down[selected])
            elif code == self.MT_ID and selected in down:
                down.pop(selected)["end"] = "cancel" if tool.get(selected) == self.PALM else "up"
        return frames, touches

    def close(self):
        stop_process(self.process)


def pair(touches, tracks):
    """Each touch with the track it shows: in landing order, the nearest first position among
    the next few (fingers that land in one frame may come in either order)."""
    unpaired, pairs = list(tracks), []
    for touch in touches:
        if not unpaired[:10]:
            return pairs, unpaired, touch
        best = min(unpaired[:10], key=lambda key: math.dist(touch["positions"][0], tracks[key][0]))
        unpaired.remove(best)
        pairs.append((touch, best))
    return pairs, unpaired, None


def touch_problem(touch, track):
    """Why the touch shown is not the published contact, or None (with "withdrawn" when it
    went on past the contact's last position, as a withdrawal: slid at most 48 px)."""
    if touch["end"] != "up":
        return f"ended {touch['end']}, not lifted", False
    shown = touch["positions"]
    why = track_problems(shown, track, TOLERANCE)
    if why is None:
        return None, False
    # Withdrawn: the positions up to the last one near the track's end are the track's, and
    # after it only the withdrawal's, within its slide of the track's last position.
    near_end = [index for index, position in enumerate(shown) if max(abs(position[0] - track[-1][0]), abs(position[1] - track[-1][1])) <= TOLERANCE]
    if near_end:
        cut = near_end[-1] + 1
        rest = shown[cut:]
        if track_problems(shown[:cut], track, TOLERANCE) is None and all(math.dist(p, track[-1]) <= WITHDRAWAL_SLIDE + TOLERANCE for p in rest):
            return None, True
    return why, False


def on_a_track(position, tracks):
    """Whether a position lies on one of the published tracks, within TOLERANCE."""
    for track in tracks.values():
        if len(track) == 1 and math.dist(position, track[0]) <= TOLERANCE:
            return True
        if any(distance_to_segment(position, a, b) <= TOLERANCE for a, b in zip(track, track[1:])):
            return True
    return False


def motionds_hop(shown, tracks, dropped):
    """What is wrong between the contacts motiond published and the touches its virtual
    touchscreen showed; how many were withdrawn (None when not known); whether it was judged
    whole. Where the kernel dropped the panel's events and the touches shown are not the
    contacts one for one, they are judged only to land on a published contact's track."""
    pairs, unpaired, stray = pair(shown, tracks)
    wrong = []
    if stray is not None:
        wrong.append(f"its virtual touchscreen showed a touch at {stray['positions'][0]} that motiond never published")
    if unpaired:
        wrong.append(f"{len(unpaired)} published contacts its virtual touchscreen never showed (first at {tracks[unpaired[0]][0]})")
    withdrawn = 0
    for touch, contact in pairs:
        why, was_withdrawn = touch_problem(touch, tracks[contact])
        withdrawn += was_withdrawn
        if why:
            wrong.append(f"contact {contact} as shown: {why}")
    if not wrong or not dropped:
        return wrong, withdrawn, True
    return [f"a touch shown landing at {touch['positions'][0]}, on no published contact's track"
            for touch in shown if not on_a_track(touch["positions"][0], tracks)], None, False


def pages_hop(page, shown):
    """What is wrong between the touches shown and the page's touches."""
    pairs, unpaired, stray = pair(page, {index: touch["positions"] for index, touch in enumerate(shown)})
    wrong = []
    if stray is not None:
        wrong.append(f"a touch on the page at {stray['positions'][0]} that was never shown")
    if unpaired:
        wrong.append(f"{len(unpaired)} touches shown never reached the page (first at {shown[unpaired[0]]['positions'][0]})")
    for touch, index in pairs:
        if touch["end"] != shown[index]["end"]:
            wrong.append(f"the touch shown landing at {shown[index]['positions'][0]} ended {shown[index]['end']}, on the page {touch['end']}")
            continue
        why = track_problems(touch["positions"], shown[index]["positions"], TOLERANCE)
        if why:
            wrong.append(f"the touch shown landing at {shown[index]['positions'][0]}, on the page: {why}")
    return wrong


def counts(client):
    """(the times the kernel dropped a panel's events, the frames the lab's virtual touchscreen
    was written), so far."""
    stats = client.request("stats")
    virtual = next(entry for entry in stats["virtual_touchscreens"] if entry["output"] == OUTPUT)
    return stats["dropped_events"], virtual["frames_written"]


def play_one(lab, page, path):
    """One recording played on its own panel, with the page in front: (published tracks, the
    touches shown, the page's touches, the times the kernel dropped the panel's events)."""
    prepared = prepare_recording(path, SCRATCH)
    client = lab.client
    client.drain()
    client.events.clear()
    page.mark()
    recorder = ShownTouches(lab.motiond.node)
    dropped_before, written_before = counts(client)
    try:
        with Panel(prepared, settle=False) as panel:
            client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
            panel.play(meanwhile=client.drain, seconds=STEP + 30)
            wait_until("motiond to publish every finger lifted", lambda: client.drain() or lab.all_lifted())
        client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
        dropped, written = counts(client)
        # A withdrawal under way writes on after the last contact was published lifted.
        def all_read():
            frames, touches = recorder.read()
            # A tuple, true even when no touch was shown (a recording all claimed).
            return (touches,) if frames >= written - written_before and all(touch["end"] for touch in touches) else None
        (shown,) = wait_until(f"evemu-record to read the {written - written_before} frames motiond wrote, every touch lifted", all_read)
    finally:
        recorder.close()
    dropped -= dropped_before
    tracks = {contact: [on_output(position) for position in track]
              for contact, track in contact_tracks(client.events).items() if not claimed(track)}

    def ended():
        touches = page_touches(page)
        return len(touches) >= len(shown) and all(touch["end"] for touch in touches)
    # Chromium may be far behind in a starved guest: in a fresh clone's run the Wacom's last
    # touches reached the page more than 20 s after motiond showed them, in the next
    # recording's window.
    try:
        wait_until(f"the page to show the {len(shown)} touches of {os.path.basename(path)} end", ended, seconds=STEP)
    except LabFailure:
        note(f"the page never showed every touch of {os.path.basename(path)} end")
    return tracks, shown, page_touches(page), dropped


def page_touches(page):
    """The page's touches since its mark. They are read out of everything the page logged, so
    that Chromium's echo of a touch of an earlier recording (in the lab, of the touch with the
    same id two recordings before) is known for one (touches_of_page) and left out."""
    since_mark = len(touches_of_page(page.events()))
    everything = touches_of_page(page.events(whole=True))
    return everything[len(everything) - since_mark:] if since_mark else []


# The recordings each compositor plays: five each, chosen for what reaches the compositor. What
# a recording varies is the panel motiond reads; what the compositors read is motiond's one
# virtual touchscreen, the same for every recording, and the kernel lab shows every recording on
# it to libinput (the compositors' reader). So these are chosen for the touches shown: taps in
# quick succession and a double tap, two fingers scrolling and a drag (where Chromium's echoes
# of an earlier touch came), four, five and ten fingers down at once, a long hold, touches one
# after another. Playing every recording, each compositor half of them, took the guests 180 s of the
# lab's 713 s on a loaded two-core host, for nothing these do not show.
CHOSEN = {
    "weston": ("whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu",
               "whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu",
               "whot-evemu-devices__atmel-maxtouch__4f-drag-down.evemu",
               "whot-evemu-devices__wacom-dth2242-finger__up-to-10f.evemu",
               "whot-evemu-devices__wacom-isdv4-e6-finger-056a-00e6__1f-double-tap-center.events"),
    "sway": ("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu",
             "whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.evemu",
             "whot-evemu-devices__dell-canvas-cooltouch__up-to-5f.evemu",
             "p12tic-xorg-integration-tests__touch-dev-n4__up-to-4f.events",
             "whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a.evemu"),
}


def recordings_for(kind):
    """The bundled recordings the `kind` compositor's guest plays (CHOSEN)."""
    by_name = {os.path.basename(path): path for path in bundled()}
    missing = [name for name in CHOSEN[kind] if name not in by_name]
    check(not missing, f"CHOSEN names recordings not in {RECORDINGS}: {missing}")
    return [by_name[name] for name in CHOSEN[kind]]


def recordings_to_page(lab):
    page = lab.open_page()
    lab.motiond.configure("", "")
    lab.probe(page, "page")
    rows, problems, totals = [], [], {"shown": 0, "withdrawn": 0, "stale": 0, "dropped": 0, "loose": 0}
    for path in recordings_for(lab.kind):
        name = os.path.basename(path)
        clock = time.monotonic()
        tracks, shown, touches, dropped = play_one(lab, page, path)
        motionds, withdrawn, whole = motionds_hop(shown, tracks, dropped)
        wrong = [f"motiond: {why}" for why in motionds] + [f"page: {why}" for why in pages_hop(touches, shown)]
        stale = sum(touch["stale"] for touch in touches)
        for key, value in (("shown", len(shown)), ("withdrawn", withdrawn or 0), ("stale", stale), ("dropped", dropped), ("loose", not whole)):
            totals[key] += value
        problems += [f"{name}: {why}" for why in wrong]
        rows.append(f"{name} | {len(tracks)} | {len(shown)} | {len(touches)} | {'-' if withdrawn is None else withdrawn} | "
                    f"{dropped} | {'whole' if whole else 'on the tracks'} | "
                    f"{sum(len(t['positions']) for t in touches)} | {stale} | {time.monotonic() - clock:.1f} | {'; '.join(wrong) or 'ok'}")
    table = "\n".join([f"{lab.kind}: recording | contacts published | touches shown | touches on the page | withdrawn | "
                       "the kernel dropped the panel's events | motiond's hop judged | page positions | Chromium's echoes left out | s | verdict"] + rows)
    check(not problems, "\n".join(problems) + "\n" + table)
    return (f"{len(rows)} recordings, {totals['shown']} touches shown and on the page at motiond's pixels within {TOLERANCE} px "
            f"({totals['withdrawn']} withdrawn; the kernel dropped the panel's events {totals['dropped']} times, and in "
            f"{totals['loose']} recordings motiond then showed other touches than it published, checked only to be on their "
            f"tracks; {totals['stale']} echoes of an earlier touch's last "
            "position left out, see touches_of_page)\n" + table)
