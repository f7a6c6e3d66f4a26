"""Exceptions raised by the nsys_ai_native client."""
from __future__ import annotations

from typing import Any

# JSON-RPC error codes: generated from protocol/errors.json (docs/protocol.md "Errors").
from ._protocol import (
    CANCELLED, CORRUPT, DATA_MISSING, EXPORT_FAILED, FILE_NOT_FOUND, INTERNAL, INVALID_PARAMS,
    INVALID_REQUEST, IO, LLM, LLM_NOT_CONFIGURED, METHOD_NOT_FOUND, NOT_FOUND, NOT_INITIALIZED,
    NOT_NSYS_EXPORT, NOT_SQLITE, NSYS_UNAVAILABLE, OUTSIDE_WORKSPACE, PARSE, PROFILE_CHANGED,
    PROFILE_NOT_OPEN, SHUTTING_DOWN, UNKNOWN_ANALYSIS,
)

__all__ = [
    "CANCELLED", "CORRUPT", "DATA_MISSING", "EXPORT_FAILED", "FILE_NOT_FOUND", "INTERNAL", "INVALID_PARAMS",
    "INVALID_REQUEST", "IO", "LLM", "LLM_NOT_CONFIGURED", "METHOD_NOT_FOUND", "NOT_FOUND", "NOT_INITIALIZED",
    "NOT_NSYS_EXPORT", "NOT_SQLITE", "NSYS_UNAVAILABLE", "OUTSIDE_WORKSPACE", "PARSE", "PROFILE_CHANGED",
    "PROFILE_NOT_OPEN", "SHUTTING_DOWN", "UNKNOWN_ANALYSIS",
    "NsysAIError", "ServerNotFoundError", "ServerDiedError", "RequestTooLargeError",
]

class NsysAIError(Exception):
    """An error answered by the server: the JSON-RPC `code`, `message` and `data`."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ServerNotFoundError(RuntimeError):
    """No `nsys-ai` executable: not given, not in $NSYS_AI_SERVER, not on PATH."""


class ServerDiedError(RuntimeError):
    """The `nsys-ai serve` process exited while a request was pending.

    The next request starts a fresh server (profiles are reopened by path).
    """

    def __init__(self, message: str, returncode: int | None, stderr_tail: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class RequestTooLargeError(ValueError):
    """A request larger than the server's frame limit (its `maxFrameBytes`): refused here,
    before sending, when the limit is known; else refused by the server, which answers
    such a frame with the request's id when it finds it in the skipped body (`by_server`)."""

    def __init__(self, method: str, size: int, limit: int, by_server: bool = False) -> None:
        super().__init__(f"{method}: the request is {size:,} bytes, over the server's frame limit of {limit:,} bytes"
                         + (" (refused by the server)" if by_server else "")
                         + " (`nsys-ai serve --max-frame-bytes N` raises it; or send less per request)")
        self.method = method
        self.size = size
        self.limit = limit
        self.by_server = by_server
