"""The optional LLM client, against a real HTTP server on 127.0.0.1 that
the tests start: canned OpenAI/Anthropic answers, 429/500 with retries,
401 (no retry, key redacted), malformed JSON, slow replies (timeout and
$/cancelRequest), the on-disk answer cache, and that the key never shows
up in logs, replies or cache files."""
from __future__ import annotations

import json
import os
import stat
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import check_schema
from nsys_rpc import RpcError, Server

KEY = "sk-test-SECRET-7f3a9c"


class FakeLLM:
    """A scripted chat-completions / messages endpoint. Each POST pops a step:
    ("ok", text), ("status", code), ("slow", seconds, text or reply),
    ("echo_auth",), ("malformed",), or a whole reply object (a dict)."""

    def __init__(self):
        self.script: list[tuple] = []
        self.default: tuple = ("ok", "default answer")
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep pytest output clean
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with fake.lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers),
                                          "body": json.loads(body or b"{}")})
                    step = fake.script.pop(0) if fake.script else fake.default
                try:
                    if isinstance(step, tuple) and step[0] == "slow":
                        time.sleep(step[1])
                        step = step[2] if isinstance(step[2], dict) else ("ok", step[2])
                    if isinstance(step, dict):  # a whole reply, as scripted (test_agent_loop.py)
                        self._send(200, json.dumps(step).encode())
                        return
                    kind = step[0]
                    if kind == "ok":
                        if self.path.endswith("/messages"):
                            reply = {"content": [{"type": "text", "text": step[1]}]}
                        else:
                            reply = {"choices": [{"message": {"role": "assistant", "content": step[1]}}]}
                        self._send(200, json.dumps(reply).encode())
                    elif kind == "status":
                        extra = {"Retry-After": "0"} if step[1] == 429 else {}
                        self._send(step[1], b'{"error": "busy"}', extra)
                    elif kind == "echo_auth":
                        self._send(401, ("bad key " + self.headers.get("Authorization", "")).encode())
                    elif kind == "malformed":
                        self._send(200, b'{"choices": [ {"message": ')
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, code, data, extra=None):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def fake():
    f = FakeLLM()
    yield f
    f.close()


def llm_env(fake: FakeLLM, tmp_path, provider="openai", **extra) -> dict:
    base = f"http://127.0.0.1:{fake.port}" + ("/v1" if provider == "openai" else "")
    env = {"NSYS_AI_LLM_PROVIDER": provider, "NSYS_AI_LLM_BASE_URL": base, "NSYS_AI_LLM_MODEL": "test-model",
           "NSYS_AI_LLM_API_KEY_ENV": "NSYS_TEST_LLM_KEY", "NSYS_TEST_LLM_KEY": KEY,
           "NSYS_AI_CACHE_DIR": str(tmp_path / "cache"), "NSYS_AI_CONFIG": "/nonexistent/config.json",
           "NSYS_AI_LLM_BACKOFF_MS": "10"}
    env.update(extra)
    return env


def assert_no_key(server: Server, *objs):
    server.close()
    assert KEY not in server.stderr
    for o in objs:
        assert KEY not in json.dumps(o)


def test_openai_answer_cache_and_secrets(fake, tmp_path):
    fake.script = [("ok", "It is FlashAttention-2; fine here.")]
    s = Server(env=llm_env(fake, tmp_path))
    r = s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
    check_schema("kernel/explain", "result", r)
    assert r["llm"] == {"model": "test-model", "provider": "openai", "cached": False,
                        "text": "It is FlashAttention-2; fine here."}
    assert "It is FlashAttention-2" in r["markdown"]
    req = fake.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    assert req["body"]["model"] == "test-model"
    prompt = req["body"]["messages"][-1]["content"]
    assert "flash_fwd_kernel" in prompt and "Knowledge base:" in prompt
    # cached: same question, no new HTTP request
    r2 = s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
    assert r2["llm"]["cached"] is True and r2["llm"]["text"] == r["llm"]["text"]
    assert len(fake.requests) == 1
    cfg = s.request("agent/configure", {})
    check_schema("agent/configure", "result", cfg)
    assert cfg["configured"] and cfg["apiKeySet"] and cfg["apiKeyEnv"] == "NSYS_TEST_LLM_KEY" and cfg["source"] == "env"
    assert_no_key(s, r, r2, cfg)
    # cache files: 0700 directory, 0600 files, no key inside
    d = tmp_path / "cache" / "llm"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    files = list(d.glob("*.json"))
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert KEY not in files[0].read_text()


def test_anthropic_provider(fake, tmp_path):
    fake.script = [("ok", "An NCCL all-reduce.")]
    s = Server(env=llm_env(fake, tmp_path, provider="anthropic"))
    r = s.request("kernel/explain", {"name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "llm": True})
    assert r["llm"]["text"] == "An NCCL all-reduce." and r["llm"]["provider"] == "anthropic"
    req = fake.requests[0]
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == KEY and req["headers"]["anthropic-version"]
    assert "Authorization" not in req["headers"]
    assert req["body"]["system"] and req["body"]["messages"][0]["role"] == "user"
    assert_no_key(s, r)


def test_retries_on_429_and_500(fake, tmp_path):
    fake.script = [("status", 429), ("status", 500), ("ok", "third time lucky")]
    s = Server(env=llm_env(fake, tmp_path))
    r = s.request("kernel/explain", {"name": "triton_poi_fused_add_0", "llm": True})
    assert r["llm"]["text"] == "third time lucky"
    assert len(fake.requests) == 3
    s.close()


def test_persistent_500_fails_after_retries(fake, tmp_path):
    fake.default = ("status", 503)
    s = Server(env=llm_env(fake, tmp_path, NSYS_AI_LLM_RETRIES="2"))
    with pytest.raises(RpcError) as e:
        s.request("kernel/explain", {"name": "reduce_kernel", "llm": True})
    assert e.value.code == -32015
    assert "HTTP 503" in e.value.message and "3 attempts" in e.value.message
    assert len(fake.requests) == 3
    assert_no_key(s)


def test_401_is_not_retried_and_key_is_redacted(fake, tmp_path):
    fake.script = [("echo_auth",)]
    s = Server(env=llm_env(fake, tmp_path))
    with pytest.raises(RpcError) as e:
        s.request("kernel/explain", {"name": "elementwise_kernel", "llm": True})
    assert e.value.code == -32015 and "HTTP 401" in e.value.message
    assert KEY not in e.value.message and "***" in e.value.message
    assert len(fake.requests) == 1
    assert_no_key(s)


def test_malformed_reply(fake, tmp_path):
    fake.script = [("malformed",)]
    s = Server(env=llm_env(fake, tmp_path, NSYS_AI_LLM_RETRIES="0"))
    with pytest.raises(RpcError) as e:
        s.request("kernel/explain", {"name": "softmax_warp_forward", "llm": True})
    assert e.value.code == -32015 and "malformed" in e.value.message
    s.close()


def test_timeout(fake, tmp_path):
    fake.script = [("slow", 3.0, "too late")]
    s = Server(env=llm_env(fake, tmp_path, NSYS_AI_LLM_TIMEOUT_MS="400", NSYS_AI_LLM_RETRIES="0"))
    t0 = time.monotonic()
    with pytest.raises(RpcError) as e:
        s.request("kernel/explain", {"name": "index_elementwise_kernel", "llm": True})
    assert e.value.code == -32015 and "400 ms" in e.value.message
    assert time.monotonic() - t0 < 2.5
    s.close()


def test_cancel_during_request(fake, tmp_path):
    fake.script = [("slow", 10.0, "never seen")]
    s = Server(env=llm_env(fake, tmp_path))
    rid = s.start("kernel/explain", {"name": "CatArrayBatchedCopy", "llm": True})
    time.sleep(0.5)
    t0 = time.monotonic()
    s.notify("$/cancelRequest", {"id": rid})
    reply = s.wait_reply(rid, timeout=10)
    assert reply["error"]["code"] == -32800
    assert time.monotonic() - t0 < 3
    s.close()


def test_agent_ask_with_llm(fake, tmp_path, small_profile):
    fake.script = [("ok", "The top kernel dominates.")]
    s = Server(env=llm_env(fake, tmp_path))
    pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
    r = s.request("agent/ask", {"profileId": pid, "question": "Which kernel is the bottleneck?"})
    check_schema("agent/ask", "result", r)
    assert r["mode"] == "llm" and r["answer"].startswith("The top kernel dominates.")
    assert "Evidence from the profile" in r["answer"]
    prompt = fake.requests[0]["body"]["messages"][-1]["content"]
    assert "Which kernel is the bottleneck?" in prompt
    top = next(e for e in r["evidence"] if e["id"] == "top_kernels")["data"]["kernels"][0]["name"]
    assert top in prompt
    # llm:false forces the evidence answer without a request
    n = len(fake.requests)
    r2 = s.request("agent/ask", {"profileId": pid, "question": "Which kernel is the bottleneck?", "llm": False})
    assert r2["mode"] == "evidence" and len(fake.requests) == n
    assert_no_key(s, r, r2)


def test_configure_at_runtime(fake, tmp_path, cache_dir):
    fake.script = [("ok", "configured later")]
    env = {"NSYS_AI_CACHE_DIR": str(tmp_path / "c"), "NSYS_AI_CONFIG": "/nonexistent/config.json",
           "NSYS_AI_LLM_BASE_URL": "", "NSYS_AI_LLM_MODEL": "", "NSYS_AI_LLM_PROVIDER": "",
           "MY_KEY": KEY}
    s = Server(env=env)
    with pytest.raises(RpcError) as e:
        s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
    assert e.value.code == -32014
    with pytest.raises(RpcError) as e:
        s.request("agent/configure", {"provider": "gemini"})
    assert e.value.code == -32602 and "provider" in e.value.message
    with pytest.raises(RpcError) as e:
        s.request("agent/configure", {"apiKey": KEY})  # the key itself is never accepted
    assert e.value.code == -32602 and "apiKey" in e.value.message and KEY not in e.value.message
    with pytest.raises(RpcError) as e:
        s.request("agent/configure", {"timeoutMs": 5})
    assert e.value.code == -32602 and "timeoutMs" in e.value.message
    cfg = s.request("agent/configure", {"baseUrl": f"http://127.0.0.1:{fake.port}/v1", "model": "m2",
                                        "apiKeyEnv": "MY_KEY"})
    assert cfg["configured"] and cfg["model"] == "m2" and cfg["source"] == "configure" and cfg["apiKeySet"]
    r = s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
    assert r["llm"]["text"] == "configured later"
    assert fake.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    off = s.request("agent/configure", {"enabled": False})
    assert off["configured"] is False
    assert_no_key(s, cfg, r, off)


def test_config_file(fake, tmp_path):
    conf = tmp_path / "config.json"
    conf.write_text(json.dumps({"llm": {"provider": "openai", "baseUrl": f"http://127.0.0.1:{fake.port}/v1",
                                        "model": "from-file", "apiKeyEnv": "NSYS_TEST_LLM_KEY"}}))
    fake.script = [("ok", "file config works")]
    env = {"NSYS_AI_CONFIG": str(conf), "NSYS_AI_CACHE_DIR": str(tmp_path / "c"), "NSYS_TEST_LLM_KEY": KEY,
           "NSYS_AI_LLM_BASE_URL": "", "NSYS_AI_LLM_MODEL": "", "NSYS_AI_LLM_PROVIDER": ""}
    s = Server(env=env)
    cfg = s.request("agent/configure", {})
    assert cfg["source"] == "file" and cfg["model"] == "from-file"
    r = s.request("kernel/explain", {"name": "reduce_kernel", "llm": True})
    assert r["llm"]["text"] == "file config works" and r["llm"]["model"] == "from-file"
    assert_no_key(s, cfg, r)


def test_configure_through_initialize_options(fake, tmp_path):
    fake.script = [("ok", "from initialize")]
    env = {"NSYS_AI_CACHE_DIR": str(tmp_path / "c"), "NSYS_AI_CONFIG": "/nonexistent/config.json",
           "NSYS_AI_LLM_BASE_URL": "", "NSYS_AI_LLM_MODEL": "", "NSYS_AI_LLM_PROVIDER": "", "MY_KEY": KEY}
    bad = Server(env=env, initialize=False)
    with pytest.raises(RpcError) as e:
        bad.request("initialize", {"initializationOptions": {"llm": {"provider": "gemini"}}})
    assert e.value.code == -32602 and "initializationOptions.llm" in e.value.message
    bad.close()
    s = Server(env=env, initialize=False)
    s.request("initialize", {"initializationOptions": {"llm": {
        "baseUrl": f"http://127.0.0.1:{fake.port}/v1", "model": "m3", "apiKeyEnv": "MY_KEY"}}})
    s.notify("initialized", {})
    r = s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
    assert r["llm"]["text"] == "from initialize"
    assert fake.requests[0]["body"]["model"] == "m3"
    assert_no_key(s, r)
