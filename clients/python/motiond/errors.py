"""The one exception the client raises for what motiond or the connection refused."""

from __future__ import annotations

#: The codes motiond itself sends (docs/protocol.md, "Errors").
PROTOCOL_CODES = frozenset({
    "bad_json", "bad_request", "unknown_op", "unknown_stream", "unknown_element",
    "not_writable", "bad_value", "exists", "forbidden", "unknown_device", "busy",
    "reload_failed", "line_too_long",
})

#: The codes the client adds, as motiond.js does: no reply in time, or the connection went
#: (or never came) before the reply.
CLIENT_CODES = frozenset({"timeout", "disconnected"})


class MotiondError(Exception):
    """A request motiond refused, with the protocol's error code, so that a program can tell
    an unknown stream from a forbidden control op without reading the message; or `timeout` /
    `disconnected` when no reply came."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        #: The protocol's code (`unknown_stream`, `forbidden`…), or `timeout`, `disconnected`.
        self.code = code
        #: motiond's words, naming what was wrong.
        self.message = message
