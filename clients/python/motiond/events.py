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
        """The event a parsed `value` or `state` line says."""
        kind = line["event"]
        return Event(kind=kind, stream=line["stream"],
                     value=line["value"] if kind == "value" else line.get("state"),
                     t=line.get("t", 0.0), seq=line.get("seq"), line=line)


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
