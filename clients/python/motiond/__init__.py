"""motiond's Python client: the touch daemon's streams, gestures and control, standard
library only.

    import asyncio, motiond

    async def main():
        async with motiond.Client() as client:           # $MOTIOND_SOCKET or /run/motiond/motiond.sock
            async for event in client.subscribe("card.position"):
                print(event.stream, event.value, event.t, event.seq)

    asyncio.run(main())

`Client` (asyncio) reconnects and subscribes again by itself when motiond restarts;
`SyncClient` is the same with blocking methods, for programs with their own main loop.
Refusals raise `MotiondError` with the protocol's code. docs/clients-python.md has more.
"""

from .client import DEFAULT_SOCKET, Client, Subscription, default_socket, glob_matches
from .errors import CLIENT_CODES, PROTOCOL_CODES, MotiondError
from .events import Event, Pose
from .sync import EventQueue, SyncClient

__all__ = [
    "CLIENT_CODES", "DEFAULT_SOCKET", "PROTOCOL_CODES", "Client", "Event", "EventQueue", "MotiondError", "Pose",
    "Subscription", "SyncClient", "default_socket", "glob_matches",
]
__version__ = "0.1.0"
