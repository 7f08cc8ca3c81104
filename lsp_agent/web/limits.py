"""What one fetch may do: its formats, its size, its redirects and the user agent it sends.

Shared by the ``webfetch`` tool (which checks and asks) and the network half that fetches
(``web/fetch.py``). No httpx here: the tool imports this at start-up, the network half only
on the first fetch.
"""

from __future__ import annotations

from typing import Literal

Format = Literal["markdown", "text", "html"]

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
MAX_RESPONSE_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
TOO_LARGE = "Response too large (exceeds 5 MB limit)"

USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
