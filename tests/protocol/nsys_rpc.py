"""A small JSON-RPC 2.0 client over LSP framing for the protocol tests.

It spawns `nsys-ai serve`, writes framed messages to its stdin and reads
framed messages from its stdout on a background thread, so tests can send
pipelined requests and collect out-of-order replies. Every result that
request() returns is validated against its method's result schema
(protocol/schemas), so every protocol test checks the schemas too.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "protocol" / "schemas"
_VALIDATORS: dict[str, Any] = {}


def schema_validator(method: str, kind: str, strict_integers: bool = False) -> Any:
    """A jsonschema validator (draft 2020-12, $refs resolved) of
    protocol/schemas/<method with / as .>.<kind>.json (kind: params|result), made
    once; None when the method has no such schema (e.g. test/...).
    strict_integers: "integer" admits only integer literals (Python ints), not
    floats with a zero fraction such as 1.7267511786677676e+18."""
    name = f"{method.replace('/', '.')}.{kind}"
    key = f"{name}/strict" if strict_integers else name
    if key not in _VALIDATORS:
        path = SCHEMAS / f"{name}.json"
        if not path.exists():
            _VALIDATORS[key] = None
        else:
            import jsonschema
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            registry = Registry().with_resources(
                (p.name, Resource.from_contents(json.loads(p.read_text()), default_specification=DRAFT202012))
                for p in SCHEMAS.glob("*.json"))
            schema = json.loads(path.read_text())
            cls = jsonschema.validators.validator_for(schema)
            if strict_integers:
                checker = cls.TYPE_CHECKER.redefine("integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool))
                cls = jsonschema.validators.extend(cls, type_checker=checker)
            _VALIDATORS[key] = cls(schema, registry=registry)
    return _VALIDATORS[key]


_FAST_VALIDATORS: dict[str, Any] = {}
_SCHEMA_BASE = "https://nsys-ai.invalid/schemas/"  # resolves the schemas' relative $ids and $refs


def fast_result_validator(method: str) -> Any:
    """The result schema compiled by jsonschema-rs (draft 2020-12, $refs resolved),
    made once; None when the method has no result schema or jsonschema-rs is not
    installed. Same schemas and draft as schema_validator, about 100 times
    faster: every reply of every test is validated, and in pure Python that was
    most of the protocol suite's time (a 1 MB timeline/range reply: ~2 s)."""
    name = f"{method.replace('/', '.')}.result"
    if name not in _FAST_VALIDATORS:
        path = SCHEMAS / f"{name}.json"
        try:
            import jsonschema_rs
        except ImportError:
            jsonschema_rs = None
        if jsonschema_rs is None or not path.exists():
            _FAST_VALIDATORS[name] = None
        else:
            registry = jsonschema_rs.Registry(
                [(_SCHEMA_BASE + p.name, json.loads(p.read_text())) for p in SCHEMAS.glob("*.json")])
            _FAST_VALIDATORS[name] = jsonschema_rs.validator_for(
                json.loads(path.read_text()), registry=registry, base_uri=_SCHEMA_BASE + path.name)
    return _FAST_VALIDATORS[name]


def result_schema_errors(method: str, result: Any) -> list[str]:
    """The result's violations of its method's result schema (none without one):
    checked by jsonschema-rs when installed, by jsonschema otherwise, which
    also words the errors of a result jsonschema-rs rejects."""
    fast = fast_result_validator(method)
    if fast is not None and fast.is_valid(result):
        return []
    v = schema_validator(method, "result")
    if v is None:
        return []
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(result)][:10]
    if not errors and fast is not None:  # the two validators disagree: say so rather than pass
        errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message} (jsonschema-rs only)"
                  for e in fast.iter_errors(result)][:10]
    return errors


def server_binary() -> str:
    env = os.environ.get("NSYS_AI_BIN")
    if env:
        return env
    for cand in (REPO / "build" / "nsys-ai",):
        if cand.exists():
            return str(cand)
    raise RuntimeError("nsys-ai binary not found: build it (meson setup build && ninja -C build) "
                       "or set NSYS_AI_BIN")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class Server:
    """A running `nsys-ai serve` process."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, initialize: bool = True):
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen([server_binary(), "serve", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env)
        self.messages: "queue.Queue[dict | None]" = queue.Queue()
        self.notifications: list[dict] = []
        # when each reply's header arrived (time.monotonic()): the server had finished the
        # answer then; a large reply is still being read and parsed after it
        self.reply_header_at: dict[Any, float] = {}
        self.replies: dict[Any, dict] = {}
        self.null_id_errors: list[dict] = []
        self._next_id = 1
        self._stderr_chunks: list[bytes] = []
        threading.Thread(target=self._read_loop, daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._stderr_loop, daemon=True)
        self._stderr_thread.start()
        if initialize:
            self.request("initialize", {"processId": os.getpid(), "capabilities": {}})
            self.notify("initialized", {})

    # -- transport -------------------------------------------------------
    def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                headers = {}
                t_header = None
                while True:
                    line = out.readline()
                    if t_header is None:
                        t_header = time.monotonic()
                    if not line:
                        self.messages.put(None)
                        return
                    line = line.rstrip(b"\r\n")
                    if not line:
                        break
                    k, _, v = line.partition(b":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers[b"content-length"])
                body = out.read(n)
                msg = json.loads(body)
                if isinstance(msg, dict) and "method" not in msg and msg.get("id") is not None:
                    self.reply_header_at[msg["id"]] = t_header
                self.messages.put(msg)
        except Exception:  # pragma: no cover - surfaced through queue end
            self.messages.put(None)

    def _stderr_loop(self) -> None:
        err = self.proc.stderr
        assert err is not None
        for chunk in iter(lambda: err.read1(4096), b""):
            self._stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr_chunks).decode("utf-8", "replace")

    SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "ThreadSanitizer",
                         "Invalid read", "Invalid write", "definitely lost", "possibly lost")

    def assert_no_sanitizer_reports(self) -> None:
        """Under a sanitizer (or valgrind) build, any report on stderr fails the test that
        caused it; call after close() or at a point where the server has settled."""
        time.sleep(0.05)
        err = self.stderr
        for marker in self.SANITIZER_MARKERS:
            assert marker not in err, err[-4000:]

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict) -> None:
        self.send_raw(frame(json.dumps(msg).encode()))

    def next_id(self) -> int:
        i = self._next_id
        self._next_id += 1
        return i

    # -- messages --------------------------------------------------------
    def _pump(self, timeout: float) -> dict | None:
        msg = self.messages.get(timeout=timeout)
        if msg is None:
            return None
        if "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg:
            if msg["id"] is None:
                # Errors about unreadable messages (parse errors, oversized frames) carry
                # id null and may legitimately repeat.
                self.null_id_errors.append(msg)
                return msg
            if msg["id"] in self.replies:
                raise AssertionError(f"second reply for id {msg['id']!r}: {msg}")
            self.replies[msg["id"]] = msg
        else:
            self.notifications.append(msg)
        return msg

    def _pump_until(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        """Files incoming messages until done() holds; TimeoutError or EOFError
        (naming `what` and carrying the server's stderr) when it does not."""
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out waiting for {what}; stderr:\n{self.stderr}")
            try:
                if self._pump(left) is None:
                    raise EOFError(f"server closed while waiting for {what}; stderr:\n{self.stderr}")
            except queue.Empty:
                continue

    def wait_reply(self, rid: Any, timeout: float = 60.0) -> dict:
        self._pump_until(lambda: rid in self.replies, timeout, f"the reply to id {rid!r}")
        return self.replies[rid]

    def wait_null_id_errors(self, count: int = 1, timeout: float = 10.0) -> list[dict]:
        """Waits until `count` id-null error replies (to unreadable messages: parse
        errors, bad or oversized frames) have arrived since the server started,
        filing replies and notifications read meanwhile as usual, and returns all
        of them so far, oldest first."""
        self._pump_until(lambda: len(self.null_id_errors) >= count, timeout, f"{count} id-null error(s)")
        return list(self.null_id_errors)

    def start(self, method: str, params: Any = None) -> int:
        rid = self.next_id()
        msg: dict = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def request(self, method: str, params: Any = None, timeout: float = 120.0) -> Any:
        reply = self.wait_reply(self.start(method, params), timeout)
        if "error" in reply:
            e = reply["error"]
            raise RpcError(e["code"], e["message"], e.get("data"))
        errors = result_schema_errors(method, reply["result"])
        assert not errors, f"{method} result does not match its schema: {errors}"
        return reply["result"]

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def close(self, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=timeout)
            except Exception:
                pass  # e.g. -32002/-32017: still say exit below
            try:
                self.notify("exit")
            except Exception:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # the process has exited: let the reader take the rest of its stderr,
        # so `stderr` is complete once close() returns
        self._stderr_thread.join(timeout=timeout)
        return self.proc.returncode

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
