"""Exceptions raised by the nsys_ai client."""
from __future__ import annotations

from typing import Any

# JSON-RPC codes of docs/protocol.md "Errors" (server/src/common/errors.h).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
FILE_NOT_FOUND = -32001
NOT_INITIALIZED = -32002
NOT_SQLITE = -32003
NOT_NSYS_EXPORT = -32004
PROFILE_NOT_OPEN = -32005
NSYS_UNAVAILABLE = -32006
EXPORT_FAILED = -32007
NOT_FOUND = -32008
DATA_MISSING = -32009
UNKNOWN_ANALYSIS = -32010
OUTSIDE_WORKSPACE = -32011
IO_ERROR = -32012
PROFILE_CHANGED = -32013
CORRUPT = -32016
SHUTTING_DOWN = -32017
CANCELLED = -32800


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
