"""Waiting for a process to answer HTTP."""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable
from urllib.parse import urlsplit


def first_response(
    url: str, deadline: float, alive: Callable[[], bool] = lambda: True, poll: float = 0.002, status: int | None = None
) -> float | None:
    """Polls ``url`` until any HTTP answer (with ``status``: an answer with that status) arrives:
    the time.time() it did, or None at ``deadline`` (a time.time()) or as soon as ``alive()`` says
    the process is gone."""
    parts = urlsplit(url)
    target = parts.path + ("?" + parts.query if parts.query else "")
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=1.0)
            conn.request("GET", target)
            resp = conn.getresponse()
            resp.read()
            conn.close()
            if status is None or resp.status == status:
                return time.time()
        except (OSError, http.client.HTTPException):
            pass
        if not alive():
            return None
        time.sleep(poll)
    return None
