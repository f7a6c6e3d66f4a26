"""The MCP sql_query tool (profile/query) on real nsys exports: it answers
SELECTs exactly as an independent sqlite3 connection does, refuses writes,
ATTACH, PRAGMA and every other statement, cuts huge results and long
queries, and leaves the profile byte-identical with nothing beside it."""
from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import need_real
from mcp_line import McpLine

# one export per schema generation (pre-2022, EXPORT_META_DATA, META_DATA_EXPORT), non-UTF-8 strings
REAL = ["nsys2021_a100_cuda_callchains", "nsys2023_t4_2streams", "nsys2025_no_cuda_non_utf8", "nsys2026_tiny"]

REFUSED = [
    "INSERT INTO StringIds VALUES (999999, 'x')",
    "UPDATE StringIds SET value = 'x'",
    "DELETE FROM StringIds",
    "DROP TABLE StringIds",
    "CREATE TABLE t(x)",
    "CREATE TEMP TABLE t(x)",
    "CREATE TEMP VIEW v AS SELECT 1",
    "ALTER TABLE StringIds ADD COLUMN y",
    "ATTACH DATABASE '{tmp}/attached.db' AS x",
    "DETACH DATABASE main",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 5",
    "PRAGMA table_info(StringIds)",
    "BEGIN IMMEDIATE",
    "VACUUM",
    "VACUUM INTO '{tmp}/copy.db'",
    "REINDEX",
    "ANALYZE",
    "SELECT 1; DELETE FROM StringIds",
    "WITH x AS (SELECT 1) DELETE FROM StringIds",
    "SELECT load_extension('{tmp}/evil.so')",
    "SELECT * FROM pragma_table_info('StringIds')",
]


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def beside(p: Path) -> set[str]:
    return {q.name for q in p.parent.iterdir() if q.name.startswith(p.name)}


@pytest.fixture(scope="module")
def client(cache_dir):
    c = McpLine(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    yield c
    assert c.close() == 0


@pytest.mark.parametrize("name", REAL)
def test_sql_tool_is_read_only_and_bounded(client, name, tmp_path):
    prof = need_real(name)
    before, files_before = sha256(prof), beside(prof)
    pid = client.call("profile_open", {"path": str(prof)})["structuredContent"]["profileId"]
    q = lambda sql, **kw: client.call("sql_query", {"profileId": pid, "sql": sql, **kw})  # noqa: E731
    # answers equal an independent read-only connection's
    with sqlite3.connect(f"file:{prof}?mode=ro&immutable=1", uri=True) as db:
        db.text_factory = bytes
        n_strings = db.execute("SELECT count(*) FROM StringIds").fetchone()[0]
        tables = sorted(r[0].decode() for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        max_id = db.execute("SELECT max(id) FROM StringIds").fetchone()[0]
    r = q("SELECT count(*) AS n, max(id) AS m FROM StringIds")
    assert not r["isError"], r
    assert r["structuredContent"]["columns"] == ["n", "m"]
    assert r["structuredContent"]["rows"] == [[n_strings, max_id]]
    r = q("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", maxRows=10000)
    assert [row[0] for row in r["structuredContent"]["rows"]] == sorted(tables)
    # every write, ATTACH, PRAGMA and non-SELECT statement is refused before it runs
    for sql in REFUSED:
        r = q(sql.format(tmp=tmp_path))
        assert r["isError"], sql
        assert "-32602" in r["content"][0]["text"], (sql, r)
    assert not list(tmp_path.iterdir())  # no attached.db, no copy.db
    # huge results are cut at maxRows (and at 2 MiB), not refused
    r = q("SELECT a.id, b.id FROM StringIds a, StringIds b", maxRows=10)["structuredContent"]
    assert r["rowCount"] == 10 and len(r["rows"]) == 10 and r["truncated"] is True
    r = q("SELECT printf('%.4000c', 'x') FROM StringIds a, StringIds b", maxRows=10000)["structuredContent"]
    assert r["truncated"] is True and 0 < r["rowCount"] < 10000
    assert sum(len(row[0]) for row in r["rows"]) <= 2 * 1024 * 1024 + 4096
    # a long query is interrupted at timeoutMs
    t0 = time.monotonic()
    r = q("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", timeoutMs=300)
    assert r["isError"] and "-32030" in r["content"][0]["text"]
    assert time.monotonic() - t0 < 5
    # the server goes on, and the profile is untouched
    assert q("SELECT 1")["structuredContent"]["rows"] == [[1]]
    assert sha256(prof) == before
    assert beside(prof) == files_before


def test_sql_params_are_checked(client, small_profile):
    pid = client.call("profile_open", {"path": str(small_profile)})["structuredContent"]["profileId"]
    for args, field in [({"sql": ""}, "sql"), ({"sql": "SELECT 1", "maxRows": 0}, "maxRows"),
                        ({"sql": "SELECT 1", "maxRows": 10001}, "maxRows"),
                        ({"sql": "SELECT 1", "timeoutMs": 60001}, "timeoutMs"), ({"sql": "  ;  -- nothing"}, "sql")]:
        r = client.call("sql_query", {"profileId": pid, **args})
        assert r["isError"] and f"arguments.{field}" in r["content"][0]["text"], (args, r)
    r = client.call("sql_query", {"profileId": pid, "sql": "SELECT x'00ff', 1.5, NULL, 'é' -- comment\n;"})
    assert r["structuredContent"]["rows"] == [["x'00ff'", 1.5, None, "é"]]
