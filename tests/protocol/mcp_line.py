"""A raw client of `nsys-ai mcp` (newline-delimited JSON-RPC over stdio), for
what the official SDK hides: exact integer digits, unanswered (cancelled)
requests, malformed lines. The SDK itself drives the server in test_mcp.py."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time

from nsys_rpc import server_binary


class McpLine:
    def __init__(self, *args: str, env: dict | None = None, initialize: bool = True):
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen([server_binary(), "mcp", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env)
        self.lines: queue.Queue = queue.Queue()
        self.stderr = ""
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        self._err_thread = threading.Thread(target=self._read_err, daemon=True)
        self._err_thread.start()
        if initialize:
            r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "test", "version": "0"}})
            assert r["result"]["protocolVersion"] == "2025-06-18"
            self.notify("notifications/initialized")

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.put(raw.decode())
        self.lines.put(None)

    def _read_err(self):
        self.stderr = self.proc.stderr.read().decode(errors="replace")

    def send_raw(self, text: str) -> None:
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def send(self, msg: dict) -> None:
        self.send_raw(json.dumps(msg) + "\n")

    def notify(self, method: str, params: dict | None = None) -> None:
        m = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)

    def start(self, method: str, params: dict | None = None) -> int:
        self._next += 1
        m = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)
        return self._next

    def next_line(self, timeout: float = 30) -> str | None:
        return self.lines.get(timeout=timeout)

    def wait(self, rid, timeout: float = 60, raw: bool = False, seen: list | None = None):
        """The reply to rid (its text when raw); other lines go to seen."""
        end = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            assert line is not None, f"server exited: {self.stderr}"
            assert line.endswith("\n") and "\n" not in line[:-1]
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return line if raw else msg
            if seen is not None:
                seen.append(msg)

    def request(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        return self.wait(self.start(method, params), timeout)

    def call(self, tool: str, args: dict, timeout: float = 120, **meta) -> dict:
        params = {"name": tool, "arguments": args}
        if meta:
            params["_meta"] = meta
        r = self.request("tools/call", params, timeout)
        assert "result" in r, r
        return r["result"]

    def close(self) -> int:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        rc = self.proc.wait(timeout=30)
        self._err_thread.join(timeout=10)
        assert "Sanitizer" not in self.stderr and "runtime error" not in self.stderr, self.stderr[-4000:]
        return rc
