#!/usr/bin/env python3
"""The host's side of the compositor lab's screenshot: while a guest runs, answers its
requests (OUT/screendump.request, holding a NAME) with a picture of its screen, taken through
QEMU's monitor (`screendump`), as OUT/NAME.png, then OUT/NAME.done.

    screendump.py MONITOR_SOCKET OUT PID     until process PID (the guest's vng, which runs QEMU) ends
"""
import os
import socket
import struct
import sys
import time
import zlib


def monitor(path, command, seconds=30):
    """Sends one command to QEMU's human monitor and waits for its next prompt."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(seconds)
        connection.connect(path)
        said = b""
        while not said.endswith(b"(qemu) "):
            said += connection.recv(4096)
        connection.sendall(command.encode() + b"\n")
        said = b""
        while b"(qemu) " not in said:
            said += connection.recv(4096)


def ppm_to_png(ppm, png):
    """A binary PPM (P6, 8 bits) as a PNG, with nothing but the standard library."""
    with open(ppm, "rb") as source:
        data = source.read()
    fields, offset = [], 0
    while len(fields) < 4:
        while data[offset:offset + 1].isspace():
            offset += 1
        if data[offset:offset + 1] == b"#":
            offset = data.index(b"\n", offset) + 1
            continue
        end = offset
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[offset:end])
        offset = end
    magic, width, height = fields[0], int(fields[1]), int(fields[2])
    assert magic == b"P6" and int(fields[3]) == 255, f"not an 8-bit P6 PPM: {fields}"
    pixels = data[offset + 1:]
    rows = b"".join(b"\0" + pixels[row * width * 3:(row + 1) * width * 3] for row in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    with open(png, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                  + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def main():
    path, out, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    request = os.path.join(out, "screendump.request")
    while os.path.exists(f"/proc/{pid}"):
        if os.path.exists(request):
            with open(request) as source:
                name = source.read().strip()
            os.unlink(request)
            ppm = os.path.join(out, f"{name}.ppm")
            try:
                monitor(path, f"screendump {ppm}")
                # QEMU may finish writing it after the prompt: until its size holds.
                deadline, size = time.monotonic() + 10, -1
                while time.monotonic() < deadline and (not os.path.exists(ppm) or os.path.getsize(ppm) != size):
                    size = os.path.getsize(ppm) if os.path.exists(ppm) else -1
                    time.sleep(0.3)
                ppm_to_png(ppm, os.path.join(out, f"{name}.png"))
                os.unlink(ppm)
            except (OSError, AssertionError, ValueError) as failure:
                print(f"screendump: {failure}", file=sys.stderr)
            open(os.path.join(out, f"{name}.done"), "w").close()
        time.sleep(0.2)


if __name__ == "__main__":
    main()
