"""The messages between ``run``'s client and the warm process: a 4-byte length, then one JSON
object; the first message of a run carries the client's stdin, stdout and stderr as
descriptors (``SCM_RIGHTS``), so the run writes to and reads from the user's own terminal or
pipes, exactly as a cold run does."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
from collections.abc import Sequence
from typing import Any

_HEADER = struct.Struct("!I")
_CREDS = struct.Struct("3i")
MAX_MESSAGE = 16 * 1024 * 1024
"""A run's environment and argv fit easily; anything bigger is not a client of ours."""


class WireError(Exception):
    """The other side closed, or sent what is not a message."""


def send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    body = json.dumps(message).encode("ascii")  # \u escapes keep an environment's odd bytes
    frame = _HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [frame], list(fds))
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def receive(sock: socket.socket, *, max_fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    """One message and the descriptors that came with it (closed here if it is not one)."""
    fds: list[int] = []
    if max_fds:
        head, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, max_fds)
    else:
        head = sock.recv(_HEADER.size)
    try:
        head += _read_exactly(sock, _HEADER.size - len(head))
        (size,) = _HEADER.unpack(head)
        if size > MAX_MESSAGE:
            raise WireError("message too large")
        message = json.loads(_read_exactly(sock, size).decode("ascii"))
        if not isinstance(message, dict):
            raise WireError("not a message")
    except (WireError, ValueError, OSError):
        close_all(fds)
        raise WireError("not a message") from None
    return message, fds


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = sock.recv(size)
        if not chunk:
            raise WireError("closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def close_all(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end (``SO_PEERCRED``): the kernel's word."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDS.size)
    _pid, uid, _gid = _CREDS.unpack(creds)
    return int(uid)
