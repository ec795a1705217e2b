#!/usr/bin/env python3
"""Rewrites a multitouch protocol B evemu recording as the protocol A panel would send it.

Protocol A (Documentation/input/multi-touch-protocol.rst in the kernel) has no slots and
here no tracking ids, as older N-trig, eGalax and Hanvon firmware: every frame lists each
contact down, its axes followed by SYN_MT_REPORT; a frame with no contact has one empty
SYN_MT_REPORT. Legacy events (BTN_TOUCH, ABS_X/Y) stay where they were in the frame.
The header loses ABS_MT_SLOT and ABS_MT_TRACKING_ID from its B: 03 mask and A: lines.

With --no-empty-report, a frame with no contact has no SYN_MT_REPORT at all, only its
legacy events (BTN_TOUCH 0) and SYN_REPORT, as some firmware ends its last touch (an N-trig
panel of 2011) although the kernel's documentation asks for the empty report.

    to-protocol-a.py [--no-empty-report] IN.evemu > OUT.evemu
"""
import os
import sys

SLOT, TRACKING_ID = 0x2F, 0x39
EV_SYN, EV_ABS = 0, 3
SYN_REPORT, SYN_MT_REPORT = 0, 2
MT_AXES = range(0x30, 0x3C)  # ABS_MT_TOUCH_MAJOR .. ABS_MT_DISTANCE, less slot and id below


def header_line(line):
    if line.startswith("B: 03 "):
        mask = [int(b, 16) for b in line.split()[2:]]
        for code in (SLOT, TRACKING_ID):
            mask[code // 8] &= ~(1 << (code % 8))
        return "B: 03 " + " ".join(f"{b:02x}" for b in mask)
    if line.startswith("A: ") and int(line.split()[1], 16) in (SLOT, TRACKING_ID):
        return None
    return line


def main(path, empty_report=True):
    slots, current, legacy = {}, 0, []
    for number, raw in enumerate(open(path, encoding="utf-8")):
        line = raw.rstrip("\n")
        if number == 1:
            flag = "" if empty_report else " --no-empty-report"
            print(f"# Converted to multitouch protocol A by to-protocol-a.py{flag} (beside this file) from")
            print(f"# {os.path.basename(path)}; the comments below describe that file.")
        if not line.startswith("E: "):
            line = header_line(line)
            if line is not None:
                print(line)
            continue
        _, time, type_, code, value = line.split("#")[0].split()
        type_, code, value = int(type_, 16), int(code, 16), int(value)
        if type_ == EV_ABS and code == SLOT:
            current = value
        elif type_ == EV_ABS and code == TRACKING_ID:
            if value < 0:
                slots.pop(current, None)
            else:
                slots.setdefault(current, {})
        elif type_ == EV_ABS and code in MT_AXES:
            slots.setdefault(current, {})[code] = value
        elif type_ == EV_SYN and code == SYN_REPORT:
            contacts = [slots[s] for s in sorted(slots)]
            for contact in contacts:
                for axis in sorted(contact):
                    print(f"E: {time} {EV_ABS:04x} {axis:04x} {contact[axis]:04d}")
                print(f"E: {time} {EV_SYN:04x} {SYN_MT_REPORT:04x} 0000")
            if not contacts and empty_report:
                print(f"E: {time} {EV_SYN:04x} {SYN_MT_REPORT:04x} 0000")
            for event in legacy:
                print(event)
            print(f"E: {time} {EV_SYN:04x} {SYN_REPORT:04x} 0000")
            legacy = []
        else:
            legacy.append(f"E: {time} {type_:04x} {code:04x} {value:04d}")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(arguments[-1], empty_report="--no-empty-report" not in arguments)
