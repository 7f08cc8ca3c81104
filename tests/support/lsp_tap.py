"""A transparent stdio proxy between Neovim and ``lsp-agent serve`` that records every LSP
message, both ways, as JSON lines: ``python lsp_tap.py LOG -- SERVER_COMMAND...``.

The wire-shape test runs the plugin through it and checks each recorded message against the
server's protocol models."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import IO


def pump(
    source: IO[bytes], sink: IO[bytes], direction: str, log: IO[str], lock: threading.Lock
) -> None:
    while True:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = source.read(1)
            if not byte:
                sink.close()
                return
            header += byte
        length = 0
        for line in header.decode("ascii").split("\r\n"):
            if line.lower().startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        body = source.read(length)
        sink.write(header + body)
        sink.flush()
        with lock:
            try:
                message = json.loads(body)
            except ValueError:
                message = {"unparsed": body.decode("utf-8", "replace")}
            log.write(json.dumps({"direction": direction, "message": message}) + "\n")
            log.flush()


def main() -> int:
    log_path, separator, *command = sys.argv[1:]
    assert separator == "--", "usage: lsp_tap.py LOG -- COMMAND..."
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None
    assert server.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        up = threading.Thread(
            target=pump, args=(sys.stdin.buffer, server.stdin, "client", log, lock), daemon=True
        )
        down = threading.Thread(
            target=pump, args=(server.stdout, sys.stdout.buffer, "server", log, lock), daemon=True
        )
        up.start()
        down.start()
        code = server.wait()
        down.join(timeout=5)
    return code


if __name__ == "__main__":
    sys.exit(main())
