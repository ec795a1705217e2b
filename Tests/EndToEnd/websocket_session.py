#!/usr/bin/python3
"""The WebSocket endpoint as a browser page and other clients see it, against a real motiond.

    websocket_session.py REPOSITORY MOTIOND CONFIG RECORDING TOKEN_FILE

Starts MOTIOND with CONFIG (whose [websocket] listens on 127.0.0.1:0, allows the origin
http://allowed.example and reads TOKEN_FILE), replaying RECORDING in a loop at 4x, reads the
port it bound from its log, and runs each check in turn. Prints one JSON line per check:
{"check": NAME, "ok": true|false, "detail": ...}, then motiond's exit. Every wait has a
deadline; the whole script ends within a few minutes whatever motiond does.

Uses python3-websockets (Debian's 10.4: asyncio only).
"""
import asyncio
import json
import os
import re
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request

import websockets

repository, motiond, config, recording, token_file = sys.argv[1:6]
TOKEN = open(token_file).read().strip()
ALLOWED = "http://allowed.example"


def report(check, ok, detail=""):
    print(json.dumps({"check": check, "ok": bool(ok), "detail": detail}), flush=True)


class Daemon:
    """motiond, its log kept, its WebSocket address read from the log."""

    async def start(self):
        self.socket = os.path.join(tempfile.mkdtemp(), "motiond.sock")
        self.process = await asyncio.create_subprocess_exec(
            motiond, "--config", config, "--socket", self.socket, "--replay", recording, "--loop", "--speed", "4",
            stderr=asyncio.subprocess.PIPE)
        self.log = []
        while True:
            line = await asyncio.wait_for(self.process.stderr.readline(), 30)
            if not line:
                raise RuntimeError("motiond exited before listening: " + "".join(self.log))
            self.log.append(line.decode())
            found = re.search(r"websocket on (\S+):", line.decode())
            if found:
                self.address = found.group(1)
                break
        self.reader = asyncio.create_task(self._keep_log())
        self.url = f"ws://{self.address}/ws"

    async def _keep_log(self):
        while line := await self.process.stderr.readline():
            self.log.append(line.decode())

    async def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.process.wait(), 10)
        except asyncio.TimeoutError:
            self.process.kill()
            return "killed"


async def connect(url, origin=None, **options):
    return await asyncio.wait_for(websockets.connect(url, origin=origin, open_timeout=10, **options), 15)


class connected:
    """`async with connected(url) as client`: a connection, closed (with a deadline) after."""

    def __init__(self, url, origin=None):
        self.url, self.origin = url, origin

    async def __aenter__(self):
        self.client = await connect(self.url, self.origin)
        return self.client

    async def __aexit__(self, *_):
        try:
            await asyncio.wait_for(self.client.close(), 10)
        except asyncio.TimeoutError:
            self.client.transport.abort()


async def receive(connection, seconds=10):
    return json.loads(await asyncio.wait_for(connection.recv(), seconds))


async def request(connection, message, seconds=10):
    """Sends a request and returns its reply, skipping the events before it."""
    await connection.send(json.dumps(message))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reply = await receive(connection, deadline - time.monotonic())
        if "event" not in reply:
            return reply
    raise TimeoutError(f"no reply to {message}")


def code(reply):
    return (reply.get("error") or {}).get("code")


async def hello_and_values(daemon):
    async with connected(daemon.url) as client:
        hello = await receive(client)
        report("hello", hello.get("event") == "hello" and hello.get("protocol") == 1 and hello.get("control") is False
               and "card.position" in hello.get("streams", []), hello)
        reply = await request(client, {"id": 1, "op": "subscribe", "streams": ["card.position"]})
        seqs = []
        while len(seqs) < 30:
            message = await receive(client)
            if message.get("stream") == "card.position":
                seqs.append(message["seq"])
        steps = [b - a for a, b in zip(seqs[1:], seqs[2:])]
        report("values with increasing seq", reply.get("ok") is True and steps and all(step == 1 for step in steps), seqs)


async def errors(daemon):
    async with connected(daemon.url) as client:
        await receive(client)
        codes = []
        for text in ["nonsense", '{"id": 1}', '{"id": 2, "op": "fly"}']:
            await client.send(text)
            codes.append(code(await receive(client)))
        await client.send(b'{"id": 3, "op": "list"}')
        codes.append(code(await receive(client)))
        still = await request(client, {"id": 4, "op": "list"})
        report("errors, and the connection stays usable", codes == ["bad_json", "bad_request", "unknown_op", "bad_json"]
               and still.get("ok") is True, codes)


async def control(daemon):
    async with connected(daemon.url) as client:
        await receive(client)
        value = {"x": 700.0, "y": 500.0}
        refused = await request(client, {"id": 1, "op": "set", "stream": "card.destination", "value": value})
        wrong = await request(client, {"id": 2, "op": "auth", "token": TOKEN + "x"})
        still = await request(client, {"id": 3, "op": "set", "stream": "card.destination", "value": value})
        right = await request(client, {"id": 4, "op": "auth", "token": TOKEN})
        allowed = await request(client, {"id": 5, "op": "set", "stream": "card.destination", "value": value})
        report("set refused without the token, and after a wrong one", code(refused) == "forbidden" and code(wrong) == "forbidden"
               and code(still) == "forbidden", [refused, wrong, still])
        report("set allowed after auth with the token", right.get("result") == {"control": True} and allowed.get("ok") is True
               and allowed["result"]["value"] == value, [right, allowed])
    # The token is a credential on the Unix socket too.
    reader, writer = await asyncio.open_unix_connection(daemon.socket)
    try:
        await asyncio.wait_for(reader.readline(), 10)
        writer.write((json.dumps({"id": 1, "op": "auth", "token": TOKEN}) + "\n").encode())
        while True:
            line = json.loads(await asyncio.wait_for(reader.readline(), 10))
            if "event" not in line:
                break
        report("auth on the Unix socket", line.get("result") == {"control": True}, line)
    finally:
        writer.close()


async def origins(daemon):
    outcomes = {}
    for origin in ["http://evil.example", f"http://{daemon.address}", ALLOWED, None]:
        try:
            async with connected(daemon.url, origin) as client:
                outcomes[str(origin)] = (await receive(client)).get("event")
        except websockets.InvalidStatusCode as error:
            outcomes[str(origin)] = error.status_code
    report("a wrong Origin is refused at the handshake with 403; a configured one and none are not",
           outcomes == {"http://evil.example": 403, f"http://{daemon.address}": 403, ALLOWED: "hello", "None": "hello"}, outcomes)


async def pages(daemon):
    def fetch(path, headers=None):
        request = urllib.request.Request(f"http://{daemon.address}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    loop = asyncio.get_running_loop()
    for path, file in [("/", "clients/web/index.html"), ("/motiond.js", "clients/js/motiond.js")]:
        status, headers, body = await loop.run_in_executor(None, fetch, path)
        expected = open(os.path.join(repository, file), "rb").read()
        report(f"GET {path} serves {file}", status == 200 and body == expected and headers["X-Content-Type-Options"] == "nosniff",
               [status, dict(headers)])
    status, headers, _ = await loop.run_in_executor(None, fetch, "/motiond.js")
    report("/motiond.js may be imported from any page", headers["Access-Control-Allow-Origin"] == "*"
           and headers["Content-Type"].startswith("text/javascript"), dict(headers))
    status, _, _ = await loop.run_in_executor(None, fetch, "/etc/passwd")
    status_ws, _, _ = await loop.run_in_executor(None, fetch, "/ws")
    report("other paths are 404, /ws without a handshake 400", status == 404 and status_ws == 400, [status, status_ws])


async def ping_and_limits(daemon):
    async with connected(daemon.url) as client:
        await receive(client)
        pong = await client.ping(b"motion")
        await asyncio.wait_for(pong, 10)
        report("ping is answered with pong", True)
        await client.send("x" * (64 * 1024 + 1))
        try:
            while True:
                await asyncio.wait_for(client.recv(), 10)
        except websockets.ConnectionClosed as closed:
            report("a message over 64 KiB closes with 1009", closed.code == 1009 and "64 KiB" in closed.reason, [closed.code, closed.reason])
    async with connected(daemon.url) as client:
        await receive(client)
        # The same limit holds for a message sent in fragments.
        await client.send(iter(["y" * 40000, "y" * 40000]))
        try:
            while True:
                await asyncio.wait_for(client.recv(), 10)
        except websockets.ConnectionClosed as closed:
            report("a fragmented message over 64 KiB closes with 1009", closed.code == 1009, [closed.code, closed.reason])
    async with connected(daemon.url) as client:
        await receive(client)
        await client.send(iter(['{"id": 7, ', '"op": "list"}']))
        reply = await receive(client)
        report("a fragmented request is answered", reply.get("id") == 7 and reply.get("ok") is True, reply)


async def slow_client(daemon):
    """A client subscribed to everything that stops reading is coalesced, then dropped with
    close code 1008, while a fast one gets every value of its stream."""
    # A small receive buffer, so that the daemon sees it stop reading after kilobytes, not
    # the megabytes loopback TCP would otherwise buffer. No keep-alive pings: unanswered
    # (nothing is read), they would make websockets itself close the connection.
    host, port = daemon.address.rsplit(":", 1)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.setblocking(False)
    await asyncio.wait_for(asyncio.get_running_loop().sock_connect(raw, (host, int(port))), 10)
    slow = await connect(daemon.url, sock=raw, max_queue=1, read_limit=1024, write_limit=1024, ping_interval=None)
    await receive(slow)
    await slow.send(json.dumps({"id": 1, "op": "subscribe", "streams": ["*"]}))
    # Stop reading: websockets stops taking data from the socket once its queue is full.
    slow.transport.pause_reading()
    fast = await connect(daemon.url)
    await receive(fast)
    await request(fast, {"id": 1, "op": "subscribe", "streams": ["card.position"]})
    watcher = await connect(daemon.url)
    await receive(watcher)
    seqs, coalesced, dropped = [], 0, False
    deadline = time.monotonic() + 90
    round = 0
    while time.monotonic() < deadline and not dropped:
        for _ in range(50):
            message = await receive(fast)
            if message.get("stream") == "card.position":
                seqs.append(message["seq"])
        round += 1
        stats = (await request(watcher, {"id": round, "op": "stats"}))["result"]
        mine = [client for client in stats["clients"] if client["subscriptions"] > 1]
        if mine:
            coalesced = max(coalesced, mine[0]["coalesced"])
        elif coalesced > 0:
            dropped = True
    gaps = sum(1 for a, b in zip(seqs[1:], seqs[2:]) if b != a + 1)
    report("a WebSocket client that stops reading is coalesced, then dropped", coalesced > 0 and dropped, [coalesced, dropped])
    report("meanwhile a fast WebSocket client gets every value", len(seqs) > 300 and gaps == 0, [len(seqs), gaps])
    # Reading again, the slow client finds its connection ended (the goodbye and the close
    # frame are best effort: they wait behind what the client did not read, and motiond
    # does not wait for a client that does not read).
    slow.transport.resume_reading()
    closed = None
    try:
        while True:
            await asyncio.wait_for(slow.recv(), 10)
    except websockets.ConnectionClosed as error:
        closed = (error.code, error.reason)
    except asyncio.TimeoutError:
        pass
    report("the dropped client's connection is ended", closed is not None, closed)
    await fast.close()
    await watcher.close()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def websocket_clients(address):
    """How many WebSocket clients motiond counts, from its /metrics."""
    request = urllib.request.Request(f"http://{address}/metrics", headers={"Connection": "close"})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return int(float(re.search(r'^motiond_clients\{transport="websocket"\} (\S+)$', text, re.M).group(1)))


def poll(condition, seconds):
    """Calls `condition` every 0.1 s until it is true (true) or `seconds` have passed (false)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def raw_frame(opcode, payload=b"", masked=True):
    """A client's frame, masked as RFC 6455 asks (or not, to be refused)."""
    head = bytes([0x80 | opcode, (0x80 if masked else 0) | len(payload)])
    key = b"\x37\xfa\x21\x3d"
    body = bytes(b ^ key[i % 4] for i, b in enumerate(payload)) if masked else payload
    return head + (key if masked else b"") + body


def raw_upgrade(address, receive_buffer=None):
    """A raw socket through the handshake; returns it and what followed the 101's head."""
    host, port = address.rsplit(":", 1)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.settimeout(10)
    raw.connect((host, int(port)))
    raw.sendall((f"GET /ws HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = raw.recv(4096)
        if not chunk:
            raise RuntimeError(f"no handshake reply: {received!r}")
        received += chunk
    head, rest = received.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"handshake refused: {head!r}")
    return raw, rest


def read_until_closed(raw, seconds=10):
    """Everything the server sends until it closes the connection (or the deadline)."""
    raw.settimeout(1)
    received, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = raw.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False


def close_code(received):
    """The code of the last close frame in a server's bytes (frames are unmasked)."""
    code, index = None, 0
    while index + 2 <= len(received):
        opcode, length = received[index] & 0x0F, received[index + 1] & 0x7F
        header = 2
        if length == 126:
            length, header = int.from_bytes(received[index + 2:index + 4], "big"), 4
        elif length == 127:
            length, header = int.from_bytes(received[index + 2:index + 10], "big"), 10
        payload = received[index + header:index + header + length]
        if opcode == 0x8:
            code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else "none"
        index += header + length
    return code


async def hostile(daemon):
    """What a hostile local process tries: a ping flood that never reads, broken frames, a
    foreign Host, a huge header. Blocking sockets, each wait bounded, in a thread."""
    def run():
        host, port = daemon.address.rsplit(":", 1)
        # 50,000 pipelined requests (2 MB) from a client that never reads its responses (a page
        # is 8 KiB each): motiond answers while the client's socket takes responses, then reads
        # no more (docs/protocol.md), so memory stays bounded. With both sockets' buffers small,
        # the kernel holds far less than 2 MB: a batch the socket does not take within 2 s is
        # motiond having stopped reading, and once it has, it answers nothing more, so memory
        # then is its last word. A motiond that read on would take all 2 MB and answer each.
        before = rss_kib(daemon.process.pid)
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        raw.settimeout(2)
        raw.connect((host, int(port)))
        requests = f"GET / HTTP/1.1\r\nHost: {daemon.address}\r\n\r\n".encode() * 1000
        sent, stalled, peak, deadline = 0, False, before, time.monotonic() + 60
        while sent < 50_000 and not stalled and time.monotonic() < deadline:
            try:
                raw.sendall(requests)
                sent += 1000
            except socket.timeout:
                stalled = True
            except (BrokenPipeError, ConnectionResetError):
                break
            peak = max(peak, rss_kib(daemon.process.pid))
        peak = max(peak, rss_kib(daemon.process.pid))
        raw.close()
        report("pipelined requests from a client that never reads stop being read, and cost bounded memory",
               stalled and peak - before < 32 * 1024, {"requests_sent": sent, "stalled": stalled, "rss_kib_before": before, "peak": peak})

        # A ping flood from a client that never reads: bounded, then dropped; memory returns.
        # It floods until dropped (or the deadline), never reading: on a fast machine motiond
        # parses 400,000 pings before the 5 s slow-client rule, and a client that stopped to
        # read would be keeping up again.
        before, clients = rss_kib(daemon.process.pid), websocket_clients(daemon.address)
        raw, _ = raw_upgrade(daemon.address, receive_buffer=4096)
        ping = raw_frame(0x9, b"p" * 125)
        batch = ping * 1000
        sent, peak, dropped = 0, before, False
        raw.settimeout(2)
        deadline = time.monotonic() + 40
        while not dropped and time.monotonic() < deadline:
            try:
                raw.sendall(batch)
                sent += 1000
            except (BrokenPipeError, ConnectionResetError):
                dropped = True
            except socket.timeout:
                pass  # motiond does not read faster than it parses: go on until dropped
            if sent % 20_000 == 0:
                peak = max(peak, rss_kib(daemon.process.pid))
        peak = max(peak, rss_kib(daemon.process.pid))
        raw.close()
        # Given back: once motiond counts the client gone, its memory returns (within 10 s).
        gone = poll(lambda: websocket_clients(daemon.address) <= clients, 10)
        returned = poll(lambda: rss_kib(daemon.process.pid) - before < 8 * 1024, 10)
        after = rss_kib(daemon.process.pid)
        report("a ping flood that never reads pongs is dropped, memory bounded and given back",
               dropped and gone and returned and peak - before < 32 * 1024,
               {"pings_sent": sent, "dropped": dropped, "client_gone": gone, "rss_kib_before": before, "peak": peak, "after": after})

        # Broken frames fail the connection with 1002; 1005 from a client is not echoed.
        results = {}
        for name, frame in [("unmasked", raw_frame(0x1, b'{"id":1,"op":"list"}', masked=False)),
                            ("rsv1", bytes([0xC1, 0x80, 0, 0, 0, 0])), ("opcode 3", raw_frame(0x3)),
                            ("close 1005", raw_frame(0x8, (1005).to_bytes(2, "big"))),
                            ("close of one byte", raw_frame(0x8, b"\x03"))]:
            raw, _ = raw_upgrade(daemon.address)
            raw.sendall(frame)
            received, closed = read_until_closed(raw, 10)
            raw.close()
            results[name] = [close_code(received), closed]
        report("broken frames fail the connection with 1002", all(v == [1002, True] for v in results.values()), results)

        # A foreign Host is refused with 421; a 200 KB header gets 400 and the connection ends.
        with socket.create_connection((host, int(port)), 10) as raw:
            raw.sendall(f"GET / HTTP/1.1\r\nHost: rebind.example:{port}\r\n\r\n".encode())
            status = raw.recv(4096)[:12]
        report("a Host that is not the listener gets 421", status == b"HTTP/1.1 421", status.decode(errors="replace"))
        with socket.create_connection((host, int(port)), 10) as raw:
            try:
                raw.sendall(f"GET / HTTP/1.1\r\nHost: {daemon.address}\r\nX-Big: {'a' * 200_000}\r\n\r\n".encode())
            except (BrokenPipeError, ConnectionResetError):
                pass
            received, closed = read_until_closed(raw, 10)
        report("a 200 KB header gets 400 and the connection ends", received.startswith(b"HTTP/1.1 400") and closed,
               [received[:40].decode(errors="replace"), closed])
    await asyncio.get_running_loop().run_in_executor(None, run)


async def stop(daemon):
    client = await connect(daemon.url)
    await receive(client)
    status = await daemon.stop()
    bye, closed = None, None
    try:
        while True:
            message = json.loads(await asyncio.wait_for(client.recv(), 10))
            if message.get("event") == "bye":
                bye = message
    except websockets.ConnectionClosed as error:
        closed = (error.code, error.reason)
    report("on stop a client reads a bye and close code 1001", bye is not None and closed is not None and closed[0] == 1001,
           [bye, closed])
    report("motiond exits 0", status == 0, status)


async def main():
    daemon = Daemon()
    await daemon.start()
    try:
        for check in [hello_and_values, errors, control, origins, pages, ping_and_limits, slow_client, hostile]:
            try:
                await asyncio.wait_for(check(daemon), 120)
            except Exception as error:
                report(check.__name__, False, f"{type(error).__name__}: {error}")
        try:
            await asyncio.wait_for(stop(daemon), 60)
        except Exception as error:
            report("stop", False, f"{type(error).__name__}: {error}")
    finally:
        if daemon.process.returncode is None:
            daemon.process.kill()
        print(json.dumps({"log": "".join(daemon.log)}), flush=True)


asyncio.run(main())
