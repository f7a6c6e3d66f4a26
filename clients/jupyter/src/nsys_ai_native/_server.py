"""The `nsys-ai serve` child process and its JSON-RPC 2.0 / LSP-framed transport.

Pure Python: a reader thread splits stdout into `Content-Length` frames and
hands each reply to the waiting caller by id, so any thread (the kernel's
main thread, a widget message handler) may call `request` concurrently.
One shared server per Python process: `shared_server()`; it is shut down at
exit, and replaced on the next use when it dies.
"""
from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections import deque
from typing import Any, Callable, Optional

from .errors import CANCELLED, INVALID_REQUEST, NsysAIError, RequestTooLargeError, ServerDiedError, ServerNotFoundError

ENV_SERVER = "NSYS_AI_SERVER"
# The server writes replies as {"jsonrpc":"2.0","id":N,"result":...}: a raw request
# takes the result's JSON text without decoding it (anything else is decoded normally).
# The server's refusal of a frame over its limit (answered with the request's id when it finds it).
_FRAME_REFUSAL = re.compile(r"frame of (\d+) bytes exceeds the maximum of (\d+) bytes")
_RESULT_PREFIX = re.compile(rb'^\{"jsonrpc":"2\.0","id":(\d+),"result":')
_STDERR_KEEP = 64  # last lines of server stderr kept for error messages


# Where a platform wheel puts its server inside this package (clients/jupyter/server_bundle.py);
# the same binary is the venv's bin/nsys-ai, which another package's `nsys-ai` may replace.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "nsys-ai")


def bundled_server() -> Optional[str]:
    """The `nsys-ai` that this package's platform wheel carries, or None (a pure wheel,
    an editable or source install)."""
    return BUNDLED if os.path.isfile(BUNDLED) and os.access(BUNDLED, os.X_OK) else None


def find_server(binary: Optional[str] = None) -> str:
    """The `nsys-ai` executable: `binary`, else $NSYS_AI_SERVER, else the one this package's
    wheel bundles, else `nsys-ai` on PATH."""
    for cand, origin in ((binary, "argument"), (os.environ.get(ENV_SERVER), f"${ENV_SERVER}")):
        if cand:
            path = shutil.which(cand) or (cand if os.path.isfile(cand) else None)
            if not path or not os.access(path, os.X_OK):
                raise ServerNotFoundError(f"nsys-ai server {cand!r} (from {origin}) is not an executable file")
            return os.path.abspath(path)
    found = bundled_server() or shutil.which("nsys-ai")
    if found:
        return found
    raise ServerNotFoundError(
        "nsys-ai server not found: pass server=PATH, set $NSYS_AI_SERVER, or put nsys-ai on PATH "
        "(`pip install nsys-ai-native` bundles it on x86-64 Linux; or build it with "
        "`meson setup build && ninja -C build`)")


_F_SETPIPE_SZ = 1031  # Linux fcntl: a pipe's capacity


def _widen_pipe(f: Any) -> None:
    """Lets the server write a large reply (a zoom step: ~100-400 KB) into the pipe at once, so
    the reader thread wakes once per reply instead of once per 64 KB (each wake-up waits for the
    GIL, which a notebook kernel's other threads hold often). Linux only; best effort."""
    try:
        import fcntl
        fcntl.fcntl(f.fileno(), _F_SETPIPE_SZ, 1 << 20)
    except (ImportError, OSError, ValueError, AttributeError):
        pass


class Cancel:
    """A request's cancellation from another thread: `cancel()` sends `$/cancelRequest` for the
    request it is bound to (`request(..., cancel=c)`) and wakes its caller, which raises
    NsysAIError(CANCELLED); cancelled before the request is sent, the request is never sent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._undo: Optional[Callable[[], None]] = None
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def _bind(self, undo: Callable[[], None]) -> bool:
        """Binds the request being sent; False when already cancelled (then nothing is bound)."""
        with self._lock:
            if self.cancelled:
                return False
            self._undo = undo
            return True


class _Pending:
    __slots__ = ("event", "reply", "raw", "raw_result", "progress")

    def __init__(self, raw: bool = False) -> None:
        self.event = threading.Event()
        self.reply: Optional[dict] = None
        self.raw = raw                         # deliver the result undecoded
        self.raw_result: Optional[bytes] = None
        self.progress: list[dict] = []         # $/progress values not yet handed to the caller


class Server:
    """One running `nsys-ai serve` process, initialized and ready for requests."""

    def __init__(self, binary: Optional[str] = None, args: tuple[str, ...] = (),
                 env: Optional[dict[str, str]] = None) -> None:
        self.binary = find_server(binary)
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self._proc = subprocess.Popen([self.binary, "serve", *args], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env=full_env, bufsize=0)
        _widen_pipe(self._proc.stdout)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()        # guards _pending and _dead
        self._write_lock = threading.Lock()  # one frame at a time on stdin
        self._dead: Optional[ServerDiedError] = None
        self._stderr: deque[str] = deque(maxlen=_STDERR_KEEP)
        self.on_notification: Optional[Callable[[str, Any], None]] = None
        self._reader = threading.Thread(target=self._read_loop, name="nsys-ai-reader", daemon=True)
        self._reader.start()
        threading.Thread(target=self._stderr_loop, name="nsys-ai-stderr", daemon=True).start()
        self.max_frame_bytes: Optional[int] = None  # the server's, once initialized
        init = self.request("initialize", {"processId": os.getpid(), "clientInfo": {"name": "nsys_ai_native"},
                                           "capabilities": {}})
        self.server_info: dict = init.get("serverInfo", {})
        self.methods: frozenset[str] = frozenset(init.get("capabilities", {}).get("methods", []))
        limit = init.get("capabilities", {}).get("maxFrameBytes")
        self.max_frame_bytes = int(limit) if isinstance(limit, int) and limit > 0 else None
        self.notify("initialized", {})

    # -- state -----------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def alive(self) -> bool:
        return self._dead is None and self._proc.poll() is None

    def stderr_tail(self) -> str:
        return "".join(self._stderr)

    # -- transport ---------------------------------------------------------------
    def _read_loop(self) -> None:
        out = self._proc.stdout
        assert out is not None
        buf = bytearray()
        try:
            while True:
                # headers, then exactly Content-Length bytes of body
                while b"\r\n\r\n" not in buf:
                    chunk = out.read(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, rest = bytes(buf).partition(b"\r\n\r\n")
                length = -1
                for line in head.split(b"\r\n"):
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v.strip())
                if length < 0:
                    raise ValueError(f"frame without Content-Length: {head[:200]!r}")
                buf = bytearray(rest)
                while len(buf) < length:
                    chunk = out.read(max(65536, length - len(buf)))
                    if not chunk:
                        return
                    buf += chunk
                body = bytes(buf[:length])
                del buf[:length]
                m = _RESULT_PREFIX.match(body, 0, 64) if body.endswith(b"}") else None
                if m is not None:
                    with self._lock:
                        pending = self._pending.get(int(m.group(1)))
                        if pending is not None and pending.raw:
                            del self._pending[int(m.group(1))]
                            pending.raw_result = body[m.end():-1]
                            pending.event.set()
                            continue
                self._dispatch(json.loads(body))
        except Exception as e:  # a protocol violation: treat the server as dead
            self._stderr.append(f"[nsys_ai_native client] bad frame from server: {e}\n")
        finally:
            self._on_exit()

    def _dispatch(self, msg: dict) -> None:
        if msg.get("method") == "$/progress":
            params = msg.get("params") or {}
            token = params.get("token")
            prefix = "nsys_ai_native-"
            if isinstance(token, str) and token.startswith(prefix) and token[len(prefix):].isdigit():
                with self._lock:
                    pending = self._pending.get(int(token[len(prefix):]))
                    if pending is not None:
                        pending.progress.append(params.get("value") or {})
                        pending.event.set()
                return
        if "method" in msg:
            cb = self.on_notification
            if cb is not None and "id" not in msg:
                try:
                    cb(msg["method"], msg.get("params"))
                except Exception:  # a callback's bug must not kill the reader
                    pass
            return
        with self._lock:  # reply and wake-up under the lock: see the wait loop in _request
            pending = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if pending is not None:
                pending.reply = msg
                pending.event.set()

    def _stderr_loop(self) -> None:
        err = self._proc.stderr
        assert err is not None
        for line in iter(err.readline, b""):
            self._stderr.append(line.decode("utf-8", "replace"))

    def _on_exit(self) -> None:
        try:
            rc = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        tail = self.stderr_tail()
        err = ServerDiedError(
            f"nsys-ai serve (pid {self._proc.pid}) exited"
            + (f" with status {rc}" if rc is not None else "")
            + "; the next request starts a new server."
            + (f"\nserver stderr (last lines):\n{tail}" if tail.strip() else ""), rc, tail)
        with self._lock:
            self._dead = err
            pending, self._pending = self._pending, {}
            for p in pending.values():
                p.event.set()

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if self.max_frame_bytes is not None and len(body) > self.max_frame_bytes and "id" in msg:
            raise RequestTooLargeError(str(msg.get("method")), len(body), self.max_frame_bytes)
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        stdin = self._proc.stdin
        assert stdin is not None
        with self._write_lock:
            stdin.write(data)
            stdin.flush()

    # -- API -----------------------------------------------------------------------
    def request(self, method: str, params: Any = None, timeout: Optional[float] = None,
                progress: Optional[Callable[[dict], None]] = None, cancel: Optional[Cancel] = None) -> Any:
        """Sends a request and waits for its reply; raises NsysAIError for an error reply.

        On timeout (or KeyboardInterrupt) the request is cancelled with $/cancelRequest.
        With `progress`, the request carries a workDoneToken and each `$/progress` value
        ({kind: begin|report|end, message?, percentage?}) is passed to it, on the calling
        thread, while waiting. `cancel` (a Cancel) cancels it from another thread.
        """
        return self._request(method, params, timeout, raw=False, progress=progress, cancel=cancel)

    def request_raw(self, method: str, params: Any = None, timeout: Optional[float] = None) -> bytes:
        """Like `request`, but returns the result as UTF-8 JSON text, undecoded.

        Used to forward large results (timeline ranges) to a notebook front end,
        which parses them itself, without a decode/encode round in Python.
        """
        return self._request(method, params, timeout, raw=True)  # type: ignore[no-any-return]

    def _request(self, method: str, params: Any, timeout: Optional[float], raw: bool,
                 progress: Optional[Callable[[dict], None]] = None, cancel: Optional[Cancel] = None) -> Any:
        rid = next(self._ids)
        pending = _Pending(raw)
        def undo() -> None:  # (a Cancel's, from another thread) the server told, the caller woken
            self._cancel(rid)
            pending.event.set()
        if cancel is not None and not cancel._bind(undo):
            raise NsysAIError(CANCELLED, f"{method}: cancelled")
        if progress is not None:
            params = {**(params or {}), "workDoneToken": f"nsys_ai_native-{rid}"}
        with self._lock:
            if self._dead is not None:
                raise self._dead
            self._pending[rid] = pending
        msg: dict = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            self._send(msg)
        except RequestTooLargeError:
            with self._lock:
                self._pending.pop(rid, None)
            raise
        except (BrokenPipeError, OSError):
            self._reader.join(timeout=5)
            with self._lock:
                self._pending.pop(rid, None)
                raise self._dead or ServerDiedError("nsys-ai serve closed its input", None, self.stderr_tail())
        try:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not pending.event.wait(left):
                    self._cancel(rid)
                    raise TimeoutError(f"{method}: no reply within {timeout} s (request cancelled)")
                with self._lock:
                    values, pending.progress = pending.progress, []
                    if (pending.reply is None and pending.raw_result is None and self._dead is None
                            and not (cancel is not None and cancel.cancelled)):
                        pending.event.clear()  # woken by progress only: wait again
                        done = False
                    else:
                        done = True
                if progress is not None:
                    for v in values:
                        try:
                            progress(v)
                        except Exception:  # a display bug must not lose the reply
                            pass
                if done:
                    break
        except KeyboardInterrupt:
            self._cancel(rid)
            raise
        if pending.raw_result is not None:
            return pending.raw_result
        reply = pending.reply
        if reply is None and cancel is not None and cancel.cancelled and self._dead is None:
            raise NsysAIError(CANCELLED, f"{method}: cancelled")
        if reply is None:  # woken by the server's death
            assert self._dead is not None
            raise self._dead
        if "error" in reply:
            e = reply["error"]
            refused = _FRAME_REFUSAL.search(str(e.get("message", "")))
            if e.get("code") == INVALID_REQUEST and refused:  # a frame the server would not read
                raise RequestTooLargeError(method, int(refused[1]), int(refused[2]), by_server=True)
            raise NsysAIError(int(e.get("code", 0)), str(e.get("message", "")), e.get("data"))
        result = reply.get("result")
        if raw:  # a reply in another layout: encode the decoded result
            return json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return result

    def _cancel(self, rid: int) -> None:
        with self._lock:
            self._pending.pop(rid, None)
        try:
            self.notify("$/cancelRequest", {"id": rid})
        except OSError:
            pass

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def close(self, timeout: float = 5.0) -> Optional[int]:
        """`shutdown` + `exit`, then waits; kills the process if it does not leave in time."""
        if self._proc.poll() is None:
            try:
                if self._dead is None:
                    self.request("shutdown", None, timeout=timeout)
                    self.notify("exit")
            except Exception:
                pass
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin,):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        return self._proc.returncode

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- the shared server of this process -----------------------------------------------
_shared: Optional[Server] = None
_shared_binary: Optional[str] = None
_shared_generation = 0
_shared_lock = threading.Lock()
last_exit_status: Optional[int] = None  # exit status of the last shared server shut down


def configure(server: Optional[str] = None) -> None:
    """Chooses the executable for the shared server (restarting it if it differs)."""
    global _shared_binary
    with _shared_lock:
        _shared_binary = server
        current = _shared
    if current is not None and current.binary != find_server(server):
        shutdown()


def shared_server(server: Optional[str] = None) -> tuple[Server, int]:
    """The process-wide server and its generation (bumped each time a new one starts)."""
    global _shared, _shared_generation
    with _shared_lock:
        if _shared is None or not _shared.alive:
            if _shared is not None:
                _shared.close(timeout=1.0)
            _shared = Server(server or _shared_binary)
            _shared_generation += 1
        return _shared, _shared_generation


def shutdown() -> None:
    """Shuts the shared server down (it restarts on the next use)."""
    global _shared, last_exit_status
    with _shared_lock:
        srv, _shared = _shared, None
    if srv is not None:
        last_exit_status = srv.close()


atexit.register(shutdown)
