"""Every bundled recording, played on a panel of its own, through motiond and the compositor to
the page: each touch motiond shows reaches the page as touchstart…touchend at motiond's pixels.

The recordings are the real ones of Tests/Fixtures/recordings (prepared as the kernel lab plays
them: fuzz 0, so the kernel passes every value on), at their own pace. What motiond published on
`screen.contacts` is the truth: the page's touches, paired with its contacts in landing order,
follow each contact's positions within TOLERANCE (a page gets fewer moves than were published:
Chromium sends at most one touchmove a frame). A contact that begins on the claiming element is
motiond's alone and never reaches the page. A contact motiond stops publishing while its finger
is still down (a filter's cancel, a panel unplugged under it) reaches the page withdrawn: its
track, then the withdrawal's slide of at most 48 px, then a lift.
"""
import glob
import math
import os
import time

from labkit import SCRATCH, STEP, LabFailure, Panel, check, device_event, note, wait_until
from preparing import prepare_recording, recording_files
from scenarios import touches_of_page, track_problems
from session import HEIGHT, WIDTH
from virtual_device import contact_tracks

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


def pair(touches, tracks):
    """Each page touch with the published contact it shows: in landing order, the nearest first
    position among the next few (fingers that land in one frame may come in either order)."""
    unpaired, pairs = list(tracks), []
    for touch in touches:
        if not unpaired[:10]:
            return pairs, unpaired, touch
        best = min(unpaired[:10], key=lambda contact: math.dist(touch["positions"][0], on_output(tracks[contact][0])))
        unpaired.remove(best)
        pairs.append((touch, best))
    return pairs, unpaired, None


def touch_problem(touch, track):
    """Why the page's touch is not the published contact, or None (with "withdrawn" when the page
    showed it go on past the contact's last position, as a withdrawal: slid at most 48 px)."""
    track = [on_output(position) for position in track]
    if touch["end"] != "up":
        return f"ended {touch['end']} on the page, not lifted", False
    shown = touch["positions"]
    why = track_problems(shown, track, TOLERANCE)
    if why is None:
        return None, False
    # Withdrawn: the page's positions up to the last one near the track's end are the track's, and
    # after it only the withdrawal's, within its slide of the track's last position.
    near_end = [index for index, position in enumerate(shown) if max(abs(position[0] - track[-1][0]), abs(position[1] - track[-1][1])) <= TOLERANCE]
    if near_end:
        cut = near_end[-1] + 1
        rest = shown[cut:]
        if track_problems(shown[:cut], track, TOLERANCE) is None and all(math.dist(p, track[-1]) <= WITHDRAWAL_SLIDE + TOLERANCE for p in rest):
            return None, True
    return why, False


def play_one(lab, page, path):
    """One recording played on its own panel, with the page in front: (published tracks, the
    page's touches)."""
    prepared = prepare_recording(path, SCRATCH)
    client = lab.client
    client.drain()
    client.events.clear()
    page.mark()
    with Panel(prepared, settle=False) as panel:
        client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
        panel.play(meanwhile=client.drain, seconds=STEP + 30)
        wait_until("motiond to publish every finger lifted", lambda: client.drain() or lab.all_lifted())
    client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
    tracks = {contact: track for contact, track in contact_tracks(client.events).items() if not claimed(track)}

    def ended():
        touches = touches_of_page(page.events())
        return len(touches) >= len(tracks) and all(touch["end"] for touch in touches)
    try:
        wait_until(f"the page to show the {len(tracks)} touches of {os.path.basename(path)} end", ended, seconds=20)
    except LabFailure:
        note(f"the page never showed every touch of {os.path.basename(path)} end")
    return tracks, touches_of_page(page.events())


def recordings_to_page(lab):
    page = lab.open_page()
    lab.motiond.configure("", "")
    lab.probe(page, "page")
    rows, problems, shown_total, withdrawn_total, stale_total = [], [], 0, 0, 0
    for path in bundled():
        name = os.path.basename(path)
        clock = time.monotonic()
        tracks, touches = play_one(lab, page, path)
        pairs, unpaired, stray = pair(touches, tracks)
        wrong = []
        if stray is not None:
            wrong.append(f"a touch at {stray['positions'][0]} that motiond never published")
        if unpaired:
            wrong.append(f"{len(unpaired)} published contacts never reached the page (first at {on_output(tracks[unpaired[0]][0])})")
        withdrawn = 0
        for touch, contact in pairs:
            why, was_withdrawn = touch_problem(touch, tracks[contact])
            withdrawn += was_withdrawn
            if why:
                wrong.append(f"contact {contact}: {why}")
        shown_total += len(pairs)
        stale = sum(touch["stale"] for touch in touches)
        stale_total += stale
        withdrawn_total += withdrawn
        problems += [f"{name}: {why}" for why in wrong]
        rows.append(f"{name} | {len(tracks)} | {len(pairs)} | {withdrawn} | {sum(len(t['positions']) for t in touches)} | {stale} | "
                    f"{time.monotonic() - clock:.1f} | {'; '.join(wrong) or 'ok'}")
    table = "\n".join([f"{lab.kind}: recording | contacts published | touches on the page | withdrawn | page positions | Chromium's echoes left out | s | verdict"] + rows)
    check(not problems, "\n".join(problems) + "\n" + table)
    return (f"{len(rows)} recordings, {shown_total} touches at motiond's pixels within {TOLERANCE} px ({withdrawn_total} withdrawn; "
            f"{stale_total} echoes of an earlier touch's last position left out, see touches_of_page)\n" + table)
