"""The transport and process management, against the real `nsys-ai serve`."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import nsys_ai_native
from nsys_ai_native import NsysAIError, RequestTooLargeError, Server, ServerDiedError, ServerNotFoundError, find_server
from nsys_ai_native import _server

from conftest import BIN


def test_find_server_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = tmp_path / "bin"
    on_path.mkdir()
    (on_path / "nsys-ai").symlink_to(BIN)
    other = tmp_path / "other-nsys-ai"
    other.symlink_to(BIN)
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.delenv("NSYS_AI_SERVER", raising=False)
    assert find_server() == str(on_path / "nsys-ai")                  # PATH
    monkeypatch.setenv("NSYS_AI_SERVER", str(other))
    assert find_server() == str(other)                                 # env beats PATH
    assert find_server(BIN) == os.path.abspath(BIN)                    # argument beats env


def test_find_server_bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wheel's binary (inside the package) comes before PATH, after env and argument;
    a file there that is not executable is passed over."""
    bundled = tmp_path / "pkg" / "bin" / "nsys-ai"
    bundled.parent.mkdir(parents=True)
    on_path = tmp_path / "bin"
    on_path.mkdir()
    (on_path / "nsys-ai").symlink_to(BIN)
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.delenv("NSYS_AI_SERVER", raising=False)
    monkeypatch.setattr(_server, "BUNDLED", str(bundled))
    assert _server.bundled_server() is None                           # a pure wheel: none
    bundled.write_bytes(Path(BIN).read_bytes())
    bundled.chmod(0o644)
    assert find_server() == str(on_path / "nsys-ai")                  # not executable: PATH
    bundled.chmod(0o755)
    assert find_server() == str(bundled)                              # bundled beats PATH
    monkeypatch.setenv("NSYS_AI_SERVER", str(on_path / "nsys-ai"))
    assert find_server() == str(on_path / "nsys-ai")                  # env beats bundled


def test_find_server_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NSYS_AI_SERVER", raising=False)
    with pytest.raises(ServerNotFoundError, match="NSYS_AI_SERVER"):
        find_server()
    notexec = tmp_path / "nsys-ai-text"
    notexec.write_text("not a program")
    notexec.chmod(stat.S_IRUSR | stat.S_IWUSR)
    monkeypatch.setenv("NSYS_AI_SERVER", str(notexec))
    with pytest.raises(ServerNotFoundError, match="not an executable"):
        find_server()


def test_initialize_and_errors() -> None:
    with Server(BIN) as s:
        assert s.server_info.get("name") == "nsys-ai"
        assert "profile/open" in s.methods
        with pytest.raises(NsysAIError) as ei:
            s.request("no/such/method", {})
        assert ei.value.code == -32601 and "no/such/method" in ei.value.message
        with pytest.raises(NsysAIError) as ei:
            s.request("profile/open", {"path": 42})
        assert ei.value.code == -32602 and "path" in ei.value.message


def test_request_over_the_frame_limit_is_refused_before_sending() -> None:
    """The server refuses an oversized frame with id null (it cannot read the id without
    reading the frame), which would leave the request waiting: the client refuses it first,
    with the sizes, and the server keeps serving."""
    with Server(BIN, args=("--max-frame-bytes", "8192")) as s:
        assert s.max_frame_bytes == 8192
        with pytest.raises(RequestTooLargeError, match="over the server's frame limit of 8,192 bytes") as ei:
            s.request("profile/open", {"path": "x" * 10_000}, timeout=10)
        assert ei.value.size > 8192 and ei.value.method == "profile/open"
        assert not s._pending
        with pytest.raises(NsysAIError) as e2:  # a request under the limit still answered
            s.request("profile/open", {"path": "x" * 100}, timeout=10)
        assert e2.value.code != 0


def test_request_refused_by_the_server_fails_with_its_sizes() -> None:
    """A client that does not know the limit sends the request: the server's refusal
    carries the request's id, so the request fails at once (not a wait), as too large."""
    with Server(BIN, args=("--max-frame-bytes", "8192")) as s:
        s.max_frame_bytes = None  # as a client that did not read maxFrameBytes
        with pytest.raises(RequestTooLargeError, match="refused by the server") as ei:
            s.request("profile/open", {"path": "x" * 10_000}, timeout=10)
        assert ei.value.limit == 8192 and ei.value.size > 10_000 and ei.value.by_server
        assert not s._pending
        with pytest.raises(NsysAIError):  # and it keeps serving
            s.request("profile/open", {"path": "x" * 100}, timeout=10)


def test_concurrent_requests_from_threads(small_profile: Path) -> None:
    with Server(BIN) as s:
        pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
        results: list[object] = []
        errors: list[BaseException] = []

        def work() -> None:
            try:
                for _ in range(20):
                    results.append(s.request("profile/info", {"profileId": pid})["counts"]["kernels"])
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(results) == 80 and len(set(results)) == 1


def test_pending_request_fails_clearly_when_server_dies() -> None:
    s = Server(BIN, args=("--test-methods",))
    box: dict[str, BaseException] = {}

    def call() -> None:
        try:
            s.request("test/sleep", {"ms": 20000})
        except BaseException as e:
            box["e"] = e

    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.3)
    os.kill(s.pid, signal.SIGKILL)
    t.join(10)
    assert not t.is_alive()
    e = box.get("e")
    assert isinstance(e, ServerDiedError), e
    assert e.returncode == -signal.SIGKILL and "exited" in str(e)
    with pytest.raises(ServerDiedError):  # later calls on the dead server fail the same way
        s.request("profile/list", {})
    s.close()


def test_timeout_cancels_request() -> None:
    with Server(BIN, args=("--test-methods",)) as s:
        t0 = time.perf_counter()
        with pytest.raises(TimeoutError):
            s.request("test/sleep", {"ms": 10000}, timeout=0.2)
        assert time.perf_counter() - t0 < 2
        assert s.request("profile/list", {}) == {"profiles": []}  # still serving


def test_cancel_from_another_thread() -> None:
    """A Cancel wakes the waiting caller at once (NsysAIError CANCELLED) and cancels the request on
    the server; cancelled before sending, the request is never sent."""
    with Server(BIN, args=("--test-methods",)) as s:
        c = _server.Cancel()
        threading.Timer(0.2, c.cancel).start()
        t0 = time.perf_counter()
        with pytest.raises(NsysAIError) as ei:
            s.request("test/sleep", {"ms": 10000}, timeout=8, cancel=c)
        assert ei.value.code == nsys_ai_native.errors.CANCELLED and time.perf_counter() - t0 < 2
        assert s.request("profile/list", {}) == {"profiles": []}  # still serving
        sent = []
        send = s._send
        s._send = lambda msg: (sent.append(msg), send(msg))[1]  # type: ignore[method-assign]
        with pytest.raises(NsysAIError):
            s.request("test/sleep", {"ms": 10000}, timeout=8, cancel=c)  # already cancelled
        assert sent == []


def test_shared_server_restarts_and_profiles_reopen(small_profile: Path, fresh_shared_server: None) -> None:
    p = nsys_ai_native.open(small_profile)
    q = nsys_ai_native.open(small_profile)
    srv = p.server
    assert q.server is srv                      # one server per process
    assert p.id == q.id                         # the server dedups the same file
    kernels = p.info()["counts"]["kernels"]
    os.kill(srv.pid, signal.SIGKILL)
    srv._reader.join(5)
    assert not srv.alive
    assert p.info()["counts"]["kernels"] == kernels  # restarted, reopened by path
    assert p.server is not srv and p.server.alive


def test_clean_shutdown_at_exit(small_profile: Path, tmp_path: Path) -> None:
    # The child records the shared server's exit status after nsys_ai_native's atexit hook ran
    # (atexit is LIFO: the hook registered before importing nsys_ai_native runs last).
    script = tmp_path / "child.py"
    script.write_text(
        "import atexit, sys\n"
        "def report():\n"
        "    from nsys_ai_native import _server\n"
        "    print('EXIT', _server.last_exit_status, flush=True)\n"
        "atexit.register(report)\n"
        "import nsys_ai_native\n"
        f"p = nsys_ai_native.open({str(small_profile)!r})\n"
        "print('PID', p.server.pid, flush=True)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "NSYS_AI_SERVER": BIN})
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.split("\n") if line)
    assert lines["EXIT"] == "0", out.stdout        # shutdown + exit => status 0 (EOF alone gives 1)
    pid = int(lines["PID"])
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"server {pid} still running after its client exited")


def test_profile_errors_carry_code(tmp_path: Path) -> None:
    with pytest.raises(NsysAIError) as ei:
        nsys_ai_native.open(tmp_path / "missing.sqlite")
    assert ei.value.code == -32001
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(NsysAIError) as ei:
        nsys_ai_native.open(junk)
    assert ei.value.code == -32003
    assert str(ei.value).startswith("[-32003]")


def test_module_configure(tmp_path: Path, fresh_shared_server: None) -> None:
    link = tmp_path / "nsys-ai-link"
    link.symlink_to(BIN)
    nsys_ai_native.configure(str(link))
    try:
        srv, _ = _server.shared_server()
        assert srv.binary == str(link)
    finally:
        nsys_ai_native.configure(None)


def test_progress_reported_to_caller_thread() -> None:
    seen: list[tuple[str, int]] = []
    with Server(BIN, args=("--test-methods",)) as s:
        res = s.request("test/sleep", {"ms": 300},
                        progress=lambda v: seen.append((v.get("kind", ""), threading.get_ident())))
        assert res == {"sleptMs": 300}
        kinds = [k for k, _ in seen]
        assert kinds[0] == "begin" and kinds[-1] == "end" and len(kinds) >= 2
        assert {t for _, t in seen} == {threading.get_ident()}  # delivered on the caller's thread
        assert s.request("test/sleep", {"ms": 1}) == {"sleptMs": 1}  # no token, no callback
