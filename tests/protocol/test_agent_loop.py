"""agent/ask's tool loop against a scripted LLM on 127.0.0.1, in both
dialects (OpenAI chat completions, Anthropic messages): multi-turn tool
calls whose results are traceable in the reply, malformed tool calls and a
tool's error sent back to the model, every budget, a malformed reply and a
cancellation; the server keeps serving and the key never shows."""
from __future__ import annotations

import json
import sqlite3
import time

import pytest

from conftest import check_schema
from nsys_rpc import RpcError, Server
from test_llm import KEY, assert_no_key, fake, llm_env  # noqa: F401 (fake: the scripted endpoint fixture)


def oa_calls(*calls, tokens=(100, 10)) -> dict:
    """An OpenAI reply calling tools: calls are (id, name, arguments text)."""
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]}}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]}}


def oa_text(text: str, tokens=(100, 10)) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]}}


def an_reply(*blocks, tokens=(100, 10)) -> dict:
    return {"content": list(blocks), "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks)
            else "end_turn", "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}}


def kernel_count(path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]


COUNT_SQL = "SELECT count(*) AS kernels FROM CUPTI_ACTIVITY_KIND_KERNEL"


def test_openai_multi_turn_tool_calls_are_traceable(fake, tmp_path, small_profile):
    n = kernel_count(small_profile)
    fake.script = [
        oa_calls(("c1", "analysis_top_kernels", '{"limit": 3}'),
                 ("c2", "sql_query", json.dumps({"sql": COUNT_SQL}))),
        oa_calls(("c3", "search", '{"query": "nccl"}')),
        oa_text(f"The profile has {n} kernels; the top one dominates."),
    ]
    s = Server(env=llm_env(fake, tmp_path))
    pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
    r = s.request("agent/ask", {"profileId": pid, "question": "How many kernels ran, and which is slowest?"})
    check_schema("agent/ask", "result", r)
    assert r["mode"] == "llm" and r["answer"].startswith(f"The profile has {n} kernels")
    assert "Evidence from the profile" in r["answer"]
    llm = r["llm"]
    assert llm["stopReason"] == "answer" and llm["turns"] == 3
    assert llm["usage"] == {"inputTokens": 300, "outputTokens": 30}
    calls = llm["toolCalls"]
    assert [(c["turn"], c["id"], c["tool"]) for c in calls] == [
        (1, "c1", "analysis_top_kernels"), (1, "c2", "sql_query"), (2, "c3", "search")]
    assert not any(c["isError"] for c in calls)
    # every number is traceable: the tool results are the methods' own answers
    assert calls[1]["result"]["rows"] == [[n]]
    top = s.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": 3}})
    assert calls[0]["result"] == top
    assert calls[2]["result"] == s.request("search", {"profileId": pid, "query": "nccl"})
    # the conversation: tools offered, results sent back under their call ids
    first, second, third = (q["body"] for q in fake.requests)
    assert first["model"] == "test-model"
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"analysis_top_kernels", "sql_query", "report", "timeline_summary"} <= names
    assert "profile_open" not in names  # the model answers about the profile it was given
    assert "How many kernels ran" in first["messages"][-1]["content"]
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2"]
    assert f'[[{n}]]' in tool_msgs[1]["content"]
    assert [m["tool_call_id"] for m in third["messages"] if m["role"] == "tool"] == ["c1", "c2", "c3"]
    assert_no_key(s, r, fake.requests[0]["body"])


def test_anthropic_multi_turn(fake, tmp_path, small_profile):
    n = kernel_count(small_profile)
    fake.script = [
        an_reply({"type": "text", "text": "Let me count."},
                 {"type": "tool_use", "id": "tu1", "name": "sql_query", "input": {"sql": COUNT_SQL}}),
        an_reply({"type": "text", "text": f"There are {n} kernels."}),
    ]
    s = Server(env=llm_env(fake, tmp_path, provider="anthropic"))
    pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
    r = s.request("agent/ask", {"profileId": pid, "question": "How many kernels?"})
    check_schema("agent/ask", "result", r)
    assert r["answer"].startswith(f"There are {n} kernels.")
    assert r["llm"]["provider"] == "anthropic" and r["llm"]["turns"] == 2
    assert r["llm"]["toolCalls"][0]["result"]["rows"] == [[n]]
    first, second = (q["body"] for q in fake.requests)
    assert fake.requests[0]["path"] == "/v1/messages"
    assert fake.requests[0]["headers"].get("x-api-key") == KEY
    assert "system" in first and all("input_schema" in t for t in first["tools"])
    assert second["messages"][1]["content"][1] == {"type": "tool_use", "id": "tu1", "name": "sql_query",
                                                    "input": {"sql": COUNT_SQL}}
    res = second["messages"][2]
    assert res["role"] == "user" and res["content"][0]["tool_use_id"] == "tu1"
    assert f"[[{n}]]" in res["content"][0]["content"] and "is_error" not in res["content"][0]
    assert_no_key(s, r)


def test_malformed_tool_calls_and_tool_errors_go_back_to_the_model(fake, tmp_path, small_profile):
    fake.script = [
        oa_calls(("a", "rm_rf_everything", "{}"),            # unknown tool
                 ("b", "search", "{not json"),              # arguments that are not JSON
                 ("c", "search", '["query"]'),              # not an object
                 ("d", "kernel_details", '{"kernelId": 999999999}'),  # the method's own error
                 ("e", "sql_query", '{"sql": "DELETE FROM StringIds"}'),  # refused
                 ("", "profile_open", '{"path": "/etc/passwd"}')),     # not offered to the agent, no id
        oa_text("Some calls failed; the evidence says enough."),
    ]
    s = Server(env=llm_env(fake, tmp_path))
    pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
    r = s.request("agent/ask", {"profileId": pid, "question": "What is slow?"})
    check_schema("agent/ask", "result", r)
    calls = r["llm"]["toolCalls"]
    assert len(calls) == 6 and all(c["isError"] for c in calls)
    assert calls[1]["arguments"] == "{not json" and calls[2]["arguments"] == ["query"]
    codes = [c["error"]["code"] for c in calls]
    assert codes == [-32602, -32602, -32602, -32008, -32602, -32602]
    tool_msgs = [m for m in fake.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 6 and all(m["content"].startswith("error -32") for m in tool_msgs)
    assert tool_msgs[5]["tool_call_id"]  # an id made for the call that had none
    assert r["answer"].startswith("Some calls failed")
    assert s.request("profile/info", {"profileId": pid})["path"] == str(small_profile)  # still serving


@pytest.mark.parametrize("budget,script,reason", [
    ({"maxTurns": 2}, [oa_calls(("x", "profile_info", "{}"))] * 3, "maxTurns"),
    ({"maxTokens": 1500}, [oa_calls(("x", "profile_info", "{}"), tokens=(1000, 100))] * 3, "maxTokens"),
    ({"maxSeconds": 1}, [("slow", 3, oa_text("too late"))], "timeout"),
])
def test_budgets_end_the_loop_without_losing_anything(fake, tmp_path, small_profile, budget, script, reason):
    fake.script = list(script)
    s = Server(env=llm_env(fake, tmp_path, NSYS_AI_LLM_RETRIES="0"))
    pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
    t0 = time.monotonic()
    r = s.request("agent/ask", {"profileId": pid, "question": "Why is it slow?", **budget})
    check_schema("agent/ask", "result", r)
    assert r["llm"]["stopReason"] == reason
    assert "did not answer within its budget" in r["answer"] and "Evidence from the profile" in r["answer"]
    assert len(r["llm"]["toolCalls"]) == {"maxTurns": 2, "maxTokens": 2, "timeout": 0}[reason]
    assert all(c["result"]["path"] == str(small_profile) for c in r["llm"]["toolCalls"])
    assert r["llm"]["turns"] == len(fake.requests)
    assert time.monotonic() - t0 < 10
    with pytest.raises(RpcError) as e:
        s.request("agent/ask", {"profileId": pid, "question": "q", "maxTurns": 0})
    assert e.value.code == -32602 and "maxTurns" in str(e.value)


def test_malformed_reply_and_cancellation_keep_the_server_serving(fake, tmp_path, small_profile):
    long_sql = json.dumps({"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                                  "SELECT count(*) FROM c", "timeoutMs": 60000})
    fake.script = [{"choices": []}, ("slow", 5, oa_text("late")), oa_calls(("l", "sql_query", long_sql))]
    s = Server(env=llm_env(fake, tmp_path))
    pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
    with pytest.raises(RpcError) as e:
        s.request("agent/ask", {"profileId": pid, "question": "What is slow?"})
    assert e.value.code == -32015 and "malformed" in str(e.value)
    for _ in range(2):  # cancelled while the model thinks, then while a tool (a long query) runs
        rid = s.start("agent/ask", {"profileId": pid, "question": "What is slow?"})
        time.sleep(0.8)
        t0 = time.monotonic()
        s.notify("$/cancelRequest", {"id": rid})
        reply = s.wait_reply(rid, timeout=10)
        assert reply["error"]["code"] == -32800 and time.monotonic() - t0 < 3
    assert len(fake.requests) == 3
    r = s.request("agent/ask", {"profileId": pid, "question": "What is slow?", "llm": False})
    assert r["mode"] == "evidence" and r["llm"] is None
    assert_no_key(s, r)
