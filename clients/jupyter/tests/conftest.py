"""Fixtures for the nsys_ai_native client tests: the real server, generated profiles, SQL references."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
PKG = HERE.parent
REPO = PKG.parents[1]
SHARED = Path(os.environ.get("NSYS_AI_SHARED", REPO.parent / "shared"))
PROFILES = SHARED / "profiles"


def server_binary() -> str:
    for env in ("NSYS_AI_BIN", "NSYS_AI_SERVER"):
        if os.environ.get(env):
            return os.path.abspath(os.environ[env])
    cand = REPO / "build" / "nsys-ai"
    if cand.exists():
        return str(cand)
    raise RuntimeError("nsys-ai binary not found: build it (meson setup build && ninja -C build) or set NSYS_AI_BIN")


BIN = server_binary()
os.environ["NSYS_AI_SERVER"] = BIN


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("nsys-ai-cache")
    os.environ["NSYS_AI_CACHE_DIR"] = str(d)
    return d


@pytest.fixture(scope="session")
def methods() -> frozenset[str]:
    """Methods the server under test implements (capabilities.methods)."""
    from nsys_ai_native import Server
    with Server(BIN) as s:
        return s.methods


def need(methods: frozenset[str], *names: str) -> None:
    """The server lists every method the test uses (it always should: client and
    server ship together, so a missing method is a failure, not a skip)."""
    missing = [n for n in names if n not in methods]
    assert not missing, f"server {BIN} does not list {', '.join(missing)} (capabilities.methods)"


def generate(out: Path, *args: str) -> Path:
    if not out.exists():
        subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(out), *args], check=True)
    return out


@pytest.fixture(scope="session")
def gen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("generated")


@pytest.fixture(scope="session")
def small_profile(gen_dir: Path) -> Path:
    return generate(gen_dir / "small.sqlite", "--preset", "small")


@pytest.fixture(scope="session")
def small_profile_b(gen_dir: Path) -> Path:
    return generate(gen_dir / "small-b.sqlite", "--preset", "small", "--seed", "7")


@pytest.fixture(scope="session")
def tagged_profile(gen_dir: Path) -> Path:
    return generate(gen_dir / "tagged.sqlite", "--preset", "small", "--source-tags")


def need_real(name: str) -> Path:
    p = PROFILES / (name if name.endswith(".sqlite") else name + ".sqlite")
    if not p.exists():
        pytest.skip(f"real profile {p.name} not available under {PROFILES}")
    return p


@pytest.fixture()
def sql() -> Iterator["SQL"]:
    yield SQL()


class SQL:
    """Independent answers straight from the SQLite export."""

    @staticmethod
    def connect(path: Path) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)

    def kernel_count(self, path: Path) -> int:
        with self.connect(path) as con:
            if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone():
                return 0
            return int(con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])

    def top_kernels(self, path: Path) -> dict[str, tuple[int, int, int, int]]:
        """shortName -> (count, totalNs, minNs, maxNs)."""
        with self.connect(path) as con:
            rows = con.execute(
                "SELECT s.value, count(*), sum(k.end - k.start), min(k.end - k.start), max(k.end - k.start) "
                "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName GROUP BY s.value").fetchall()
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def kernels_in(self, path: Path, start: int, end: int) -> int:
        """Kernels overlapping [start, end)."""
        with self.connect(path) as con:
            return int(con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < ? AND end > ?",
                                   (end, start)).fetchone()[0])

    def nvtx_names(self, path: Path) -> set[str]:
        with self.connect(path) as con:
            rows = con.execute("SELECT DISTINCT coalesce(n.text, s.value) FROM NVTX_EVENTS n "
                               "LEFT JOIN StringIds s ON s.id = n.textId").fetchall()
        return {r[0] for r in rows if r[0] is not None}


@pytest.fixture()
def fresh_shared_server() -> Iterator[None]:
    """Tests that kill or replace the shared server leave a clean one behind."""
    import nsys_ai_native
    nsys_ai_native.shutdown()
    yield
    nsys_ai_native.shutdown()
