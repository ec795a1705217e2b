"""The recordings family: every bundled recording played once on a real kernel's uinput
panel to one motiond, which grabs it and shows it on its virtual touchscreen.

One play proves two things against motionctl's replays of the same prepared file (computed on
the host, preparing.py): what motiond's clients hear (each gesture stream's state events in
order, each element's final value) is what motiond's engine makes of the recording, and what
the apps read from the virtual touchscreen through libinput (each touch's positions and its
end) is what the replay shows them. That the kernel passes the file on exactly is the test
`kernel passes recordings` (preparing.py).
"""
import os

import labkit
from labkit import (DRAG, SCRATCH, STEP, Bench, LabFailure, Panel, check, device_event, emulated, note, taken_in,
                    wait_for_frames, wait_until)
from preparing import SLOWER, dense, emulated_paces, expectation, merged_config, most_fingers, replay
from virtual_device import VIRTUAL_TOLERANCE, DebugEvents, distance, on_screen, pair_touches, virtual_node

# How far a final element value may be from the replay's. Positions and angles come from the
# fingers' positions alone, which the kernel passes on exactly; but a toss's velocity comes from
# the events' times, which the kernel stamps when the frames are written (not the recording's
# times), so a spring may land a little elsewhere. A toss that picks another snap point is
# hundreds of pixels off, far beyond this.
POSITION_TOLERANCE = 2.0    # pixels
NUMBER_TOLERANCE = 0.01     # radians, scale


class PaceLost(Exception):
    """The guest could not keep up with the recording's pace: the kernel dropped events for
    motiond, or motiond coalesced frames and then something differed. Played slower, the same
    comparison holds; the guest's speed is not what is tested."""


def recordings_bench():
    """The family's motiond (the merged configuration), subscribed to every element's
    streams, and libinput reading its virtual touchscreen for as long as it runs."""
    config = merged_config()
    bench = Bench.with_config("recordings", config, warm_up=DRAG)
    if not hasattr(bench, "watcher"):
        client = bench.client
        # The elements' streams, not the screen's: following every finger for screen.contacts
        # is work the comparison does not need, in a slow guest.
        elements = [stream[:-len(".state")] for stream in client.hello["streams"]
                    if stream.endswith(".state") and not stream.startswith("screen.")]
        client.request("subscribe", streams=[element + ".*" for element in elements])
        bench.states = [element + ".state" for element in elements]
        bench.watcher = DebugEvents(virtual_node(client), tracked=False)
        bench.closers.append(bench.watcher.stop)
    return bench


def paces(path):
    """How many times slower a recording is played first, and then if the guest could not keep
    up: at its own pace, then SLOWER times slower; in an emulated CPU a dense recording starts
    slower (preparing.emulated_paces)."""
    return emulated_paces(path) if emulated() else (1, SLOWER)


def recording_test(path):
    """The test of one recording: played at its own pace (or slower, `paces`), then judged
    (`judge`); played slower again where the guest could not keep up with it."""
    first, then = paces(path)
    slower = f" (played {first}× slower: a dense recording in an emulated CPU)" if first > 1 else ""
    try:
        try:
            return play_and_judge(path, first) + slower
        except PaceLost as lost:
            note(f"{lost}: played again {then} times slower")
            return play_and_judge(path, then, last_try=True) + f" (played {then}× slower: at {first}×, {lost})"
    except Exception:
        # A failure may leave the bench anywhere (motiond gone, a client dropped): the next
        # recording starts a new one, so one failure stays one.
        Bench.finish()
        raise


def play_and_judge(path, stretch, last_try=False):
    bench = recordings_bench()
    recording, expected = expectation(path, bench.config, stretch)
    check(expected["frames"], "the replay gave no frames")
    played = play(bench, recording, expected, stretch)
    return judge(bench, path, played, expected, last_try)


def play(bench, recording, expected, stretch):
    """Plays the prepared recording on a panel of its own: from a scene at rest, until motiond
    took in the replay's frames (or stopped taking them in), libinput ended every touch and
    every element came to rest. What was seen, for `judge`."""
    client, watcher = bench.client, bench.watcher
    client.request("reset_scene")
    wait_until("the scene at rest after reset_scene",
               lambda: all(client.request("get", stream=stream)["value"] == "atRest" for stream in bench.states))
    client.drain()
    stats = client.request("stats")
    before, coalesced_before, drops_before = taken_in(stats), stats["frames_coalesced"], stats["dropped_events"]
    client.events.clear()
    watcher.mark()
    problems = []
    with Panel(recording, settle=False) as panel:
        client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
        device = next(d for d in client.request("devices")["devices"] if d["node"] == panel.node)
        if device["grabbed"] is not True:
            problems.append(f"the panel of a virtual touchscreen is not grabbed: {device}")
        player = panel.play(meanwhile=client.drain, seconds=STEP * stretch + 30)
        # The kernel throws away what a reader has not read when the device goes, so it is
        # unplugged only once motiond has as many frames as the replay, or stopped taking them.
        taken, waited = wait_for_frames(client, before, expected["frames"], drops_before=drops_before)
    client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
    touches = len(expected["contacts"])
    try:
        wait_until(f"libinput to show {touches} touches, all ended",
                   lambda: len(watcher.touches()) >= touches and watcher.fingers_down() == 0)
    except LabFailure as failure:
        problems.append(f"{failure}: libinput showed {len(watcher.touches())}, {watcher.fingers_down()} still down")
    # Every element at rest, as its subscriber hears it: each state stream's newest value since
    # the recording began, with no request sent meanwhile.
    def at_rest():
        client.drain()
        states = {event["stream"]: event["value"] for event in client.events
                  if event.get("event") == "value" and event["stream"].endswith(".state")}
        return all(state == "atRest" for state in states.values())
    wait_until("every element to come to rest", at_rest, every=0.1)
    stats = client.request("stats")
    if taken != expected["frames"]:
        problems.append(f"motiond took in {taken} frames, the replay has {expected['frames']} (the wait for them: {waited})")
    return {"problems": problems, "events": list(client.events), "shown": watcher.touches(), "watcher": watcher,
            "player": player, "coalesced": stats["frames_coalesced"] - coalesced_before,
            "drops": stats["dropped_events"] - drops_before}


def judge(bench, path, played, expected, last_try):
    """Whether what was seen is what the replay says: the kernel dropped nothing for motiond;
    motiond took in every frame; its clients heard the replay's gestures and final values
    (`differences`) and libinput showed the replay's touches (`touch_problems`). Where either
    differs, the frames as they were written (their times, which the kernel stamped, slipped
    on a loaded machine) are replayed, and what motiond must give is what it gives for them."""
    watcher, player = played["watcher"], played["player"]
    behind = f"the kernel dropped events (SYN_DROPPED) {played['drops']} time(s) for motiond ({player.behind()})"
    if played["drops"] and not last_try:
        raise PaceLost(behind)
    check(not played["drops"], f"even played slower, {behind}")
    problems = list(played["problems"])
    published = differences(played["events"], expected["simulated"])
    shown = touch_problems(played["shown"], expected["contacts"])
    judged_by = "as replayed"
    if (published["problems"] or shown) and not problems:
        as_played = player.as_played(os.path.join(SCRATCH, "as-played.evemu"))
        again = replay(as_played, bench.config)
        published_again = differences(played["events"], again["simulated"]) if published["problems"] else published
        shown_again = touch_problems(played["shown"], again["contacts"]) if shown else []
        if published_again["problems"] or shown_again:
            problems += published["problems"] + shown + ["and as the frames were written (their times) replay:"]
            problems += published_again["problems"] + shown_again
        else:
            judged_by = (f"as the frames were written replay (written up to {1000 * player.slip():.0f} ms late;"
                         f" the recording's own times gave: " + "; ".join(published["problems"] + shown) + ")")
    else:
        problems += published["problems"] + shown
    if watcher.multiple_touch_down():
        problems.append(f"libinput dropped touches: {watcher.multiple_touch_down()}")
    if watcher.drops():
        problems.append(f"the kernel dropped events for libinput: {watcher.drops()}")
    at_once = watcher.most_down()
    if dense(path) and at_once != most_fingers(path):
        problems.append(f"libinput had at most {at_once} touches down at once, the recording {most_fingers(path)} fingers")
    if problems and played["coalesced"]:
        # A flick's velocity, and what it decides (a snap point, a direction), comes from
        # fewer frames when motiond coalesced some; played slower, it need not.
        if not last_try:
            raise PaceLost(f"motiond coalesced {played['coalesced']} of the {expected['frames']} frames, and then: " + "; ".join(problems))
        problems.append(f"(motiond coalesced {played['coalesced']} of the {expected['frames']} frames: it was behind)")
    if problems and labkit.OUT:
        kept = player.as_played(os.path.join(labkit.OUT, "played-" + os.path.basename(path)))
        log = os.path.join(labkit.OUT, "motiond-" + os.path.basename(path) + ".log")
        with open(log, "w") as out:
            out.write(bench.daemon.log_text())
        problems.append(f"(the frames as written, with their times: {kept}; motiond's log: {log})")
    check(not problems, "\n".join(problems[:8]) + f"\n(libinput: {watcher.added}; it said, last:\n"
          + "\n".join(watcher.text().splitlines()[-12:]) + ")")
    ends = [touch["end"] for touch in played["shown"]]
    heard = (f"{published['gestures']} gesture events, {published['values']} streams {judged_by}" if expected["simulated"] is not None
             else "the elements not judged (a finger still down at the end, which the unplug cancels)")
    return (f"{expected['frames']} frames; {heard};"
            f" {len(ends)} touches on the virtual touchscreen ({expected['fingers'] - len(ends)} of the panel's"
            f" {expected['fingers']} fingers removed by the filters), {ends.count('up')} TOUCH_UP, {ends.count('cancel')}"
            f" TOUCH_CANCEL, up to {at_once} down at once; {played['coalesced']} frames coalesced"
            + (f"; {player.behind()}" if player.held_back else ""))


def by_stream(events):
    """(stream, state) pairs as each stream's states in order."""
    streams = {}
    for stream, state in events:
        streams.setdefault(stream, []).append(state)
    return streams


def differences(events, simulated):
    """How what a client was published (`events`) differs from a simulation's lines: each
    gesture stream's events in order, and each stream's final value within the tolerances.
    Across streams the order may differ: two gestures that begin a frame apart live may begin
    in one frame after motiond coalesced frames it was behind on (docs/protocol.md, Slow
    clients). The screen's own streams (idle, contacts) follow the wall clock, and are left out.
    With no simulation (a finger still down at the end), nothing is compared."""
    if simulated is None:
        return {"problems": [], "gestures": 0, "values": 0}
    problems = []
    gestures = by_stream((event["stream"], event["state"]) for event in events if event.get("event") == "state")
    expected_gestures = by_stream((line["stream"], line["state"]) for line in simulated if "state" in line)
    if gestures != expected_gestures:
        problems.append(f"gesture events differ:\n  live:   {gestures}\n  replay: {expected_gestures}")
    final = {event["stream"]: event["value"] for event in events if event.get("event") == "value"}
    expected_final = {line["stream"]: line["value"] for line in simulated if "value" in line}
    for stream, value in expected_final.items():
        if stream.startswith("screen."):
            continue
        why = values_differ(final.get(stream), value)
        if why:
            problems.append(f"{stream} ends at {final.get(stream)} live, {value} replayed: {why}")
    return {"problems": problems, "gestures": sum(map(len, gestures.values())), "values": len(expected_final)}



def values_differ(live, replayed):
    """None if two published values are equal within the tolerances, else why not."""
    if isinstance(replayed, dict) and isinstance(live, dict) and set(replayed) == set(live) and {"x", "y"} <= set(replayed):
        distance = max(abs(live[key] - replayed[key]) for key in replayed)
        return None if distance <= POSITION_TOLERANCE else f"{distance:.3f} px apart"
    if isinstance(replayed, float) or isinstance(live, float):
        if isinstance(replayed, (int, float)) and isinstance(live, (int, float)) and abs(live - replayed) <= NUMBER_TOLERANCE:
            return None
        return "differ"
    return None if live == replayed else "differ"


def touch_problems(shown, contacts):
    """How libinput's touches differ from the replay's contacts: their number, and each
    touch's positions and end against its contact's."""
    if len(shown) != len(contacts):
        return [f"libinput showed {len(shown)} touches, the replay has {len(contacts)} contacts:\n"
                f"  shown:    {[(touch['positions'][:1], touch['end']) for touch in shown]}\n"
                f"  replayed: {[(contact['positions'][:1], contact['end']) for contact in contacts]}"]
    problems = []
    pairs, _ = pair_touches(shown, {index: contact["positions"] for index, contact in enumerate(contacts)})
    for touch, index in pairs:
        contact = contacts[index]
        for why in (subsequence_problems(touch["positions"], contact["positions"]), ending_problems(touch, contact)):
            if why:
                problems.append(f"the touch of contact {contact['id']} (landing {index + 1} of the replay's): {why}")
    return problems


def subsequence_problems(shown, replayed):
    """Why a touch's positions are not the replay's for its contact, or None: each shown
    position is one of the replay's, in the replay's order, and the first and last are the
    contact's first and last (all within VIRTUAL_TOLERANCE)."""
    replayed = [on_screen(position) for position in replayed]
    index = 0
    for position in shown:
        while index < len(replayed) and distance(position, replayed[index]) > VIRTUAL_TOLERANCE:
            index += 1
        if index == len(replayed):
            return f"shown at {position}, no position of the replay's after those shown before it; shown {shown[:6]}…, replayed {replayed[:6]}…"
        index += 1
    if distance(shown[0], replayed[0]) > VIRTUAL_TOLERANCE or distance(shown[-1], replayed[-1]) > VIRTUAL_TOLERANCE:
        return f"shown from {shown[0]} to {shown[-1]}, replayed from {replayed[0]} to {replayed[-1]}"
    return None


def ending_problems(touch, contact):
    """Why a touch's end is not its contact's in the replay, or None: TOUCH_UP where the
    replay lifted it, TOUCH_CANCEL where a filter cancelled it or where the finger was still
    down when the recording ended (the panel unplugged under it)."""
    due = {"ended": "up", "cancelled": "cancel", None: "cancel"}[contact["end"]]
    if touch["end"] == due:
        return None
    why = {"ended": "the replay lifted it", "cancelled": "the replay cancelled it",
           None: "it was still down when the panel was unplugged"}[contact["end"]]
    return f"ended {'TOUCH_UP' if touch['end'] == 'up' else 'TOUCH_CANCEL'}, where {why}"


