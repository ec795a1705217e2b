"""The evemu description (the "N:/I:/P:/B:/A:" header of an evemu recording) of a made-up
direct multitouch panel, one for every generator that writes one: Tests/Fixtures/phantoms,
Tests/Fixtures/recordings/exchanging and generated, and Tests/KernelLab/faults.py. One
function, so that a fix to the description reaches every generator's recordings.
"""


def description(comment, name, x_max, y_max, units, slots=10, bus="0018", product="0002", touch_major=None,
                version_line=False):
    """The header as evemu-record writes it for a protocol B touchscreen: ABS_X/ABS_Y and
    ABS_MT_POSITION_X/Y from 0 to x_max/y_max at `units` a millimetre, ABS_MT_SLOT for `slots`
    slots, ABS_MT_TRACKING_ID, BTN_TOUCH and, when touch_major is a number, ABS_MT_TOUCH_MAJOR
    from 0 to it at `units` a millimetre; fuzz, flat 0 on every axis. `comment` is the line that
    names the generator; version_line puts "# EVEMU 1.3" before it. bus is I:'s bus (0018
    BUS_I2C, 0003 BUS_USB), product its product id (vendor ffff, version 0100)."""
    keys = ["B: 01 00 00 00 00 00 00 00 00"] * 12
    keys[5] = "B: 01 00 04 00 00 00 00 00 00"  # BTN_TOUCH
    major = touch_major is not None
    return "\n".join([
        *(["# EVEMU 1.3"] if version_line else []),
        comment,
        f"N: {name}",
        f"I: {bus} ffff {product} 0100",
        "P: 02 00 00 00 00 00 00 00",  # INPUT_PROP_DIRECT
        "B: 00 0b 00 00 00 00 00 00 00",  # EV_SYN, EV_KEY, EV_ABS
        *keys,
        "B: 02 00 00 00 00 00 00 00 00",
        # ABS_X, ABS_Y; ABS_MT_SLOT; ABS_MT_TOUCH_MAJOR (61, when it is there), ABS_MT_POSITION_X/Y;
        # ABS_MT_TRACKING_ID
        f"B: 03 03 00 00 00 00 80 {'61' if major else '60'} 02",
        "B: 04 00 00 00 00 00 00 00 00",
        "B: 05 00 00 00 00 00 00 00 00",
        "B: 11 00 00 00 00 00 00 00 00",
        "B: 12 00 00 00 00 00 00 00 00",
        "B: 14 00 00 00 00 00 00 00 00",
        "B: 15 00 00 00 00 00 00 00 00",
        f"A: 00 0 {x_max} 0 0 {units}",
        f"A: 01 0 {y_max} 0 0 {units}",
        f"A: 2f 0 {slots - 1} 0 0 0",
        *([f"A: 30 0 {touch_major} 0 0 {units}"] if major else []),
        f"A: 35 0 {x_max} 0 0 {units}",
        f"A: 36 0 {y_max} 0 0 {units}",
        "A: 39 0 65535 0 0 0",
    ]) + "\n"
