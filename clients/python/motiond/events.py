"""What motiond sends unprompted, as values a program can read by attribute."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Event:
    """A `value` or `state` line of a subscribed stream (docs/protocol.md, Events).

    `value` is the stream's new value for a `value` event and the gesture's state (`began`,
    `ended`, `cancelled`, `recognized`) for a `state` event; `line` keeps the whole line, for
    what a state event carries besides (`velocity`, `count`, `location`, a screen gesture's
    `name`)."""

    #: `"value"` or `"state"`.
    kind: str
    #: The stream's name, `ID.NAME`.
    stream: str
    value: Any
    #: The frame's time, seconds on the monotonic clock of the touch events.
    t: float
    #: The stream's count of values (value events only): a gap means values were coalesced.
    seq: Optional[int] = None
    line: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def element(self) -> str:
        """The element the stream belongs to (`card` of `card.position`)."""
        return self.stream.rpartition(".")[0]

    @property
    def name(self) -> str:
        """The stream's property (`position` of `card.position`)."""
        return self.stream.rpartition(".")[2]

    @property
    def predicted(self) -> bool:
        """Whether this is a predicted stream (`ID.predicted_position`…): where the element
        will be `[screen] prediction` seconds ahead, published only with prediction on."""
        return self.name.startswith("predicted_")

    @staticmethod
    def from_line(line: dict[str, Any]) -> "Event":
        """The event a parsed `value` or `state` line says; `ValueError` saying what is
        wrong when the line is not one the protocol describes (no `value`, a `t` that is not a
        number…), so that a program never meets a half-made event."""
        kind = line.get("event")
        if kind not in ("value", "state"):
            raise ValueError(f"an event of kind {kind!r} is neither a value nor a state")
        stream = line.get("stream")
        if not isinstance(stream, str):
            raise ValueError(f"a {kind} event whose stream is {stream!r}, not a name")
        if kind == "value":
            if "value" not in line:
                raise ValueError(f"a value event of {stream} without its value")
            value = line["value"]
        else:
            value = line.get("state")
            if not isinstance(value, str):
                raise ValueError(f"a state event of {stream} whose state is {value!r}, not a word")
        t = line.get("t", 0.0)
        if not _is_number(t):
            raise ValueError(f"a {kind} event of {stream} whose t is {t!r}, not a number")
        seq = line.get("seq")
        if seq is not None and not _is_integer(seq):
            raise ValueError(f"a {kind} event of {stream} whose seq is {seq!r}, not an integer")
        return Event(kind=kind, stream=stream, value=value, t=t, seq=seq, line=line)


@dataclass(frozen=True)
class Pose:
    """Where an element is to be drawn: its position, rotation and scale (and size), the
    predicted ones while motiond predicts them, as motiond.js's `bind` draws them."""

    #: The element's id.
    element: str
    #: Its centre, `{"x", "y"}` in screen pixels.
    position: dict[str, float]
    #: Radians, clockwise on screen.
    rotation: float
    scale: float
    #: `{"width", "height"}` in pixels, once known.
    size: Optional[dict[str, float]]
    #: The time of the newest value it is made of.
    t: float
    #: Whether any of position, rotation and scale is a predicted value.
    predicted: bool


def _is_number(value: Any) -> bool:
    # bool is an int to Python, but `true` is no time.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
