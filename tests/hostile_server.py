"""A hostile fio server for tests: a real `fio --server` behind a man in the middle that
forwards everything and, once the server has started the job (FIO_NET_CMD_START), sends
the client messages of its own making (fio 3.33's protocol 97, server.h: a 24-byte header,
little-endian, CRC-16/ARC of the header and of each fragment of at most 1024 bytes)."""

from __future__ import annotations

import functools
import socket
import struct
import threading
import zlib
from collections.abc import Callable, Iterator

VERSION = 97
TEXT, START, IOLOG = 5, 11, 17
MORE = 1  # FIO_NET_CMD_F_MORE: another fragment of this message follows
FRAGMENT = 1024


@functools.cache
def _table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


@functools.lru_cache(maxsize=64)
def crc16(data: bytes) -> int:
    """fio's crc16 (crc/crc16.c)."""
    table, crc = _table(), 0
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc


def _fragment(opcode: int, chunk: bytes, flags: int) -> bytes:
    head = struct.pack("<HHIQI", VERSION, opcode, flags, 0, len(chunk))
    return head + struct.pack("<HH", crc16(head), crc16(chunk)) + chunk


def message(opcode: int, payload: bytes) -> Iterator[bytes]:
    """One message as fio sends it: fragments of at most 1024 bytes."""
    for i in range(0, max(len(payload), 1), FRAGMENT):
        more = MORE if i + FRAGMENT < len(payload) else 0
        yield _fragment(opcode, payload[i : i + FRAGMENT], more)


def text(line: bytes) -> Iterator[bytes]:
    """FIO_NET_CMD_TEXT: a line fio's client prints (struct cmd_text_pdu)."""
    return message(TEXT, struct.pack("<IIQQ", 0, len(line), 0, 0) + line)


def zlib_bomb(inflated: int) -> Iterator[bytes]:
    """FIO_NET_CMD_IOLOG, compressed for the wire (XMIT_COMPRESSED): a few MiB that fio's
    client inflates to ``inflated`` bytes before it writes them."""
    return message(IOLOG, _bomb_pdu(inflated))


@functools.cache
def _bomb_pdu(inflated: int) -> bytes:
    """The IOLOG pdu of :func:`zlib_bomb`: ``inflated`` zero bytes (whole 16 MiB blocks) as
    one zlib stream. After a full flush the compressor forgets what came before, so every
    16 MiB block after the first compresses to the same bytes: two are compressed (0.15 s,
    not the 6 s of compressing all 1.5 GiB), the others repeat the second, and the stream's
    Adler-32 of n zero bytes is (n mod 65521) << 16 | 1."""
    z = zlib.compressobj(9)
    block = b"\0" * (16 << 20)
    count = inflated // len(block)
    assert count >= 2, "at least two blocks"
    first = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    again = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    end = z.flush()[:-4]  # the final block, without the checksum of two blocks
    total = count * len(block)
    data = first + again * (count - 1) + end + struct.pack(">I", (total % 65521) << 16 | 1)
    name = b"bomb".ljust(256, b"\0")
    return struct.pack("<QIIIIII", inflated // 40, 1, 0, 1, 0, 0, 0) + name + data


def _recv(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


class HostileServer:
    """Listens on a free port of 127.0.0.1 (``port``) and forwards to the real fio server
    at ``upstream``; on each connection, after the server's START, sends what ``inject()``
    yields."""

    def __init__(self, upstream: tuple[str, int], inject: Callable[[], Iterator[bytes]]) -> None:
        self.upstream, self.inject = upstream, inject
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sent = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        server = socket.create_connection(self.upstream)

        def up() -> None:
            try:
                while chunk := client.recv(65536):
                    server.sendall(chunk)
            except OSError:
                pass

        threading.Thread(target=up, daemon=True).start()
        injected = False
        try:
            while True:
                head = _recv(server, 24)
                payload = _recv(server, struct.unpack("<I", head[16:20])[0])
                client.sendall(head + payload)
                if head[2:4] == struct.pack("<H", START) and not injected:
                    injected = True
                    for frame in self.inject():
                        client.sendall(frame)
                        self.sent += len(frame)
        except (EOFError, OSError):
            pass
        finally:
            client.close()
            server.close()
