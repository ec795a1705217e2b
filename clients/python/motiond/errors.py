"""The one exception the client raises for what motiond or the connection refused."""

from __future__ import annotations

#: The codes motiond itself sends (docs/protocol.md, "Errors").
PROTOCOL_CODES = frozenset({
    "bad_json", "bad_request", "unknown_op", "unknown_stream", "unknown_element",
    "not_writable", "bad_value", "exists", "forbidden", "unknown_device", "busy",
    "reload_failed", "line_too_long",
})

#: The codes the client adds: no reply in time, or the connection went (or never came)
#: before the reply, as motiond.js has them; and for a server that breaks the protocol, a
#: reply the client cannot read (`bad_reply`, raised to the request's caller) and any other
#: line it cannot read (`bad_line`, told to `on_error`, the line skipped).
CLIENT_CODES = frozenset({"timeout", "disconnected", "bad_reply", "bad_line"})


class MotiondError(Exception):
    """A request motiond refused, with the protocol's error code, so that a program can tell
    an unknown stream from a forbidden control op without reading the message; or one of
    `CLIENT_CODES`: `timeout` / `disconnected` when no reply came, `bad_reply` /
    `bad_line` when what came was not the protocol."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        #: The protocol's code (`unknown_stream`, `forbidden`…), or one of `CLIENT_CODES`.
        self.code = code
        #: motiond's words, naming what was wrong.
        self.message = message
