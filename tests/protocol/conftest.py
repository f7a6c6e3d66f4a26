"""Shared fixtures for the protocol tests (pytest)."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from nsys_rpc import Server, schema_validator  # noqa: E402

SHARED = Path(os.environ.get("NSYS_AI_SHARED", REPO.parent / "shared"))
PROFILES = SHARED / "profiles"
SCHEMAS = REPO / "protocol" / "schemas"


_SUMMARY: dict[str, str] = {}


def record_summary(key: str, text: str) -> None:
    """Keeps one line of what a robustness test tried (e.g. "load: 10000
    requests, 0 lost"); printed at the end of the run and, when
    NSYS_AI_STATS_DIR is set, written there for scripts/test-all.sh."""
    _SUMMARY[key] = text


def pytest_terminal_summary(terminalreporter) -> None:
    if not _SUMMARY:
        return
    line = "; ".join(_SUMMARY[k] for k in sorted(_SUMMARY))
    terminalreporter.write_line(f"robustness: {line}")
    stats = os.environ.get("NSYS_AI_STATS_DIR")
    if stats:
        Path(stats).mkdir(parents=True, exist_ok=True)
        (Path(stats) / "protocol.txt").write_text(line + "\n")


CAPTURED = REPO / "tests" / "fixtures" / "gpu"


def captured_profiles() -> list[Path]:
    """The project's own real exports (tests/fixtures/gpu: programs of
    tests/fixtures/gpu/src captured with nsys on a GPU machine, see its
    README), decompressed once into a temporary folder. Always present."""
    out = []
    dest = Path(tempfile.gettempdir()) / f"nsys-ai-captured-{os.getuid()}"
    dest.mkdir(parents=True, exist_ok=True)
    for gz in sorted(CAPTURED.glob("*.sqlite.gz")):
        raw = gzip.decompress(gz.read_bytes())
        path = dest / gz.name[: -len(".gz")]
        if not path.exists() or path.stat().st_size != len(raw) or path.read_bytes() != raw:
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(raw)
            tmp.chmod(0o444)
            os.replace(tmp, path)
        out.append(path)
    return out


# The ASan/UBSan pass (scripts/test-all.sh, suite c-asan: NSYS_AI_SANITIZED=1)
# runs this suite again against the sanitized server, for memory errors and
# undefined behaviour on every request path. Under the sanitizers it leaves out
# what only repeats paths it already takes: tests marked
# @pytest.mark.not_sanitized(reason) (the plain pass runs them), and the cases
# of SANITIZED_SIBLING, a capture of the same program as
# nsys2026_2gpu_nccl_after (same schema, tables and shape), which stays.
SANITIZED_SIBLING = "nsys2026_2gpu_nccl_before"


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "not_sanitized(reason): left out of the ASan/UBSan pass (NSYS_AI_SANITIZED=1)")


def pytest_collection_modifyitems(config, items) -> None:
    if os.environ.get("NSYS_AI_SANITIZED") != "1":
        return
    for item in items:
        mark = item.get_closest_marker("not_sanitized")
        if mark is not None:
            reason = mark.args[0]
        elif SANITIZED_SIBLING in item.name:
            reason = f"{SANITIZED_SIBLING} repeats nsys2026_2gpu_nccl_after's paths"
        else:
            continue
        item.add_marker(pytest.mark.skip(reason=f"ASan/UBSan pass: {reason}; the plain pass runs it"))


def real_profiles() -> list[Path]:
    """Every real export: those in ../shared/profiles (none when absent) and
    the project's own captures (captured_profiles)."""
    shared = sorted(PROFILES.glob("*.sqlite")) if PROFILES.is_dir() else []
    return shared + captured_profiles()


def real_path(name: str) -> Path:
    """A real export by file name, in ../shared/profiles or among the
    captures; skips with a clear message when it is not there."""
    if name == "<absent>":
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    for p in real_profiles():
        if p.name == name:
            return p
    pytest.skip(f"real profile {name} not found in {PROFILES}")


def need_real(name: str | None = None) -> Path:
    """Path of a real profile, or skip with a clear message."""
    if name is None:
        if not PROFILES.is_dir():
            pytest.skip(f"real profiles not available: {PROFILES} is absent")
        return PROFILES
    return real_path(name if name.endswith(".sqlite") else name + ".sqlite")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("nsys-ai-cache")
    os.environ["NSYS_AI_CACHE_DIR"] = str(d)
    return d


@pytest.fixture()
def server(cache_dir):
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    yield s
    s.close()


@pytest.fixture(scope="session")
def generated_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("generated")


def generate(out: Path, *args: str) -> Path:
    """Runs the deterministic generator (tools/gen_profile.py) once per path."""
    if not out.exists():
        subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(out), *args],
                       check=True)
    return out


@pytest.fixture(scope="session")
def small_profile(generated_dir) -> Path:
    """A small generated profile: 2 GPUs, NCCL, NVTX, memcpy; about 2k kernels."""
    return generate(generated_dir / "small.sqlite", "--preset", "small")


def schema_for(method: str, kind: str) -> dict:
    """Loads protocol/schemas/<method with / as .>.<kind>.json (kind: params|result)."""
    path = SCHEMAS / f"{method.replace('/', '.')}.{kind}.json"
    return json.loads(path.read_text())


def check_schema(method: str, kind: str, instance, strict_integers: bool = False) -> None:
    """Validates instance against the method's schema (jsonschema, draft 2020-12).
    strict_integers: "integer" admits only integer literals (Python ints), not
    floats with a zero fraction such as 1.7267511786677676e+18."""
    v = schema_validator(method, kind, strict_integers)
    assert v is not None, f"no schema {method} {kind}"
    errors = sorted(v.iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        msg = "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
        raise AssertionError(f"{method} {kind} does not match its schema:\n{msg}")
