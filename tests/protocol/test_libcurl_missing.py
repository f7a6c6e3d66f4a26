"""libcurl is loaded only when an LLM request is made (server/src/common/curl_dl.h):
without it the server starts and serves, and an LLM request fails with a
message that says how to install libcurl; the server goes on serving."""
from __future__ import annotations

import pytest

from nsys_rpc import RpcError, Server


def test_llm_request_without_libcurl(tmp_path):
    env = {"NSYS_AI_LLM_PROVIDER": "openai", "NSYS_AI_LLM_BASE_URL": "http://127.0.0.1:1/v1",
           "NSYS_AI_LLM_MODEL": "test-model", "NSYS_AI_CACHE_DIR": str(tmp_path / "cache"),
           "NSYS_AI_CONFIG": "/nonexistent/config.json", "NSYS_AI_LIBCURL": "/nonexistent/libcurl.so.4"}
    s = Server(env=env)
    plain = s.request("kernel/explain", {"name": "flash_fwd_kernel"})
    assert "llm" not in plain or not plain["llm"]
    with pytest.raises(RpcError) as e:
        s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
    assert e.value.code == -32015
    assert "libcurl" in e.value.message and "/nonexistent/libcurl.so.4" in e.value.message
    assert "install it" in e.value.message
    # the same answer again, and everything else still served
    with pytest.raises(RpcError) as e2:
        s.request("kernel/explain", {"name": "gemm_kernel", "llm": True})
    assert e2.value.message == e.value.message
    assert s.request("kernel/explain", {"name": "gemm_kernel"})["markdown"]
    s.close()
