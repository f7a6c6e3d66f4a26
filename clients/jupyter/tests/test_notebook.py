"""examples/quickstart.ipynb executed with nbclient (a real kernel and server); outputs asserted."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import PKG, PROFILES, SQL, generate, need

NOTEBOOK = PKG / "examples" / "quickstart.ipynb"
OUT = PKG / "test-output"


def by_tag(nb: Any, tag: str) -> Any:
    for c in nb.cells:
        if tag in c.get("metadata", {}).get("tags", []):
            return c
    raise KeyError(tag)


def raw(cell: Any, mime: str) -> Any:
    # (an empty one is the open's progress bar, cleared: shown when the index build takes a while)
    for o in cell.outputs:
        if o.get("output_type") in ("execute_result", "display_data") and o.get("data", {}).get(mime):
            return o["data"][mime]
    raise AssertionError(f"no {mime} output in cell {cell.metadata.get('tags')}: {cell.outputs}")


def data(cell: Any, mime: str) -> str:
    return str(raw(cell, mime))


def stream(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def test_quickstart_notebook(gen_dir: Path, methods: frozenset[str], monkeypatch: pytest.MonkeyPatch) -> None:
    need(methods, "analysis/run", "report/generate", "kernel/explain", "timeline/range", "nvtx/tree")
    example = generate(gen_dir / "example.sqlite", "--preset", "example")
    monkeypatch.setenv("NSYS_AI_PROFILE", str(example))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=300, store_widget_state=True,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    OUT.mkdir(exist_ok=True)
    nbformat.write(nb, OUT / "quickstart.executed.ipynb")

    for c in nb.cells:
        if c.cell_type == "code":
            errors = [o for o in c.outputs if o.get("output_type") == "error"]
            assert not errors, errors

    assert "nsys-ai-profile" in data(by_tag(nb, "open"), "text/html")
    kernels = SQL().kernel_count(example)
    assert f"{kernels:,} kernels on 4 GPUs" in stream(by_tag(nb, "info"))

    # the top kernel by total time equals the SQL answer
    ref = SQL().top_kernels(example)
    top_name = max(ref, key=lambda k: ref[k][1])
    top_html = data(by_tag(nb, "top"), "text/html")
    count, total = ref[top_name][:2]
    assert "pctOfGpu" in top_html and f"<td>{count}</td>" in top_html and f"<td>{total}</td>" in top_html

    report_md = data(by_tag(nb, "report"), "text/markdown")
    assert report_md.startswith("# nsys-ai report") and "Hotspot kernel" in report_md  # a planted problem
    explain_md = data(by_tag(nb, "explain"), "text/markdown")
    assert "cuBLAS" in explain_md or "cublas" in explain_md
    assert "<table" in data(by_tag(nb, "gaps"), "text/html")

    # the widgets: a view per cell, and their model state saved in the notebook
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    show_view = raw(by_tag(nb, "show"), "application/vnd.jupyter.widget-view+json")
    timeline = state[show_view["model_id"]]["state"]
    assert timeline["tracks"] and timeline["span"]["end"] > timeline["span"]["start"]
    assert {t["kind"] for t in timeline["tracks"]} >= {"gpu"}
    tree_view = raw(by_tag(nb, "tree"), "application/vnd.jupyter.widget-view+json")
    assert state[tree_view["model_id"]]["state"]["total"] > 0

    assert f"<td>{total}</td>" in data(by_tag(nb, "magic"), "text/html")

    real = by_tag(nb, "real")
    if (PROFILES / "nsys2026_h100_2gpu_1s.sqlite").exists():
        assert "pctOfGpu" in data(real, "text/html")
    else:
        assert "no real profile" in stream(real)
    diff = by_tag(nb, "diff")
    if (PROFILES / "nsys2026_2gpu_nccl_before.sqlite").exists():
        md = data(diff, "text/markdown")
        assert "### diff" in md and "| component |" in md and "flash_fwd_kernel" in md
    else:
        assert "no before/after pair" in stream(diff)
    assert os.environ["NSYS_AI_PROFILE"] == str(example)
