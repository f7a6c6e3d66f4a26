"""The %nsys magic, the generated protocol types, rich display helpers, and no-pandas mode."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import nsys_ai_native
from nsys_ai_native._rich import Report, markdown_to_html

from conftest import PKG, REPO


def test_generated_types_are_current() -> None:
    out = subprocess.run([sys.executable, str(REPO / "protocol" / "gen.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_generated_types_cover_every_schema() -> None:
    from nsys_ai_native import _protocol
    schemas = {p.name for p in (REPO / "protocol" / "schemas").glob("*.*.json")}
    methods = {n.rsplit(".", 2)[0].replace(".", "/") for n in schemas}
    assert methods == set(_protocol.METHODS)
    for kinds in _protocol.METHODS.values():
        for type_name in kinds.values():
            assert hasattr(_protocol, type_name), type_name
    assert _protocol.ProfileOpenResult.__required_keys__ >= {"profileId", "info"}  # type: ignore[attr-defined]


def test_magic(small_profile: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "nsys_ai_native")
    prof = ip.run_line_magic("nsys", str(small_profile))
    assert isinstance(prof, nsys_ai_native.Profile) and prof.path == str(small_profile)
    info = ip.run_line_magic("nsys", f"info {small_profile}")
    assert info["counts"]["kernels"] > 0
    with pytest.raises(ValueError, match="usage"):
        ip.run_line_magic("nsys", "")
    with pytest.raises(nsys_ai_native.NsysAIError) as ei:
        ip.run_line_magic("nsys", "/no/such/file.sqlite")
    assert ei.value.code == -32001


def test_markdown_rendering_escapes() -> None:
    html = markdown_to_html("# Title <x>\n\n- **bold** `code<>`\n\n| a | b |\n|---|---|\n| 1 | <2> |\n")
    assert "<h1>Title &lt;x&gt;</h1>" in html
    assert "<li><strong>bold</strong> <code>code&lt;&gt;</code></li>" in html
    assert "<td>&lt;2&gt;</td>" in html
    assert markdown_to_html(r"a\_b\<T\> _em_ \*x\*") == '<div class="nsys-ai"><p>a_b&lt;T&gt; <em>em</em> *x*</p></div>' and "<script" not in markdown_to_html("<script>alert(1)</script>")
    rep = Report({"findings": [{"severity": "high", "title": "GPU idle", "recommendation": "overlap"}]})
    assert "**high** GPU idle: overlap" in rep._repr_markdown_()
    assert Report({"rendered": "# R"})._repr_markdown_() == "# R"


def test_without_pandas(small_profile: Path, tmp_path: Path) -> None:
    # a child interpreter where `import pandas` fails: results are plain dicts and lists
    (tmp_path / "pandas.py").write_text("raise ImportError('pandas hidden for this test')\n")
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import nsys_ai_native\n"
            "p = nsys_ai_native.open(%r)\n"
            "assert p.frames is False\n"
            "t = p.tracks()\n"
            "assert isinstance(t, list)\n"
            "print('OK', type(p.info()).__name__)\n") % (str(tmp_path), str(small_profile))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "OK dict" in out.stdout, out.stderr


def test_server_extension_turns_nagle_off() -> None:
    """The Jupyter server extension wraps the kernel websocket's open with set_nodelay(True),
    once, and is what the wheel's jupyter_server_config.d file enables."""
    import asyncio
    import json
    pytest.importorskip("jupyter_server")
    from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

    from nsys_ai_native import _jupyter_server as ext
    assert nsys_ai_native._jupyter_server_extension_points() == [{"module": "nsys_ai_native._jupyter_server"}]
    conf = json.loads((PKG / "jupyter-config" / "jupyter_server_config.d" / "nsys_ai_native.json").read_text())
    assert conf == {"ServerApp": {"jpserver_extensions": {"nsys_ai_native": True}}}
    calls: list = []

    async def fake_open(self: object, kernel_id: str) -> str:
        calls.append(("open", kernel_id))
        return "opened"

    class Handler:
        def set_nodelay(self, value: bool) -> None:
            calls.append(("nodelay", value))

    real = KernelWebsocketHandler.open
    KernelWebsocketHandler.open = fake_open  # type: ignore[method-assign]
    try:
        assert ext.install_nodelay() and ext.install_nodelay()
        assert asyncio.run(KernelWebsocketHandler.open(Handler(), "k1")) == "opened"  # type: ignore[arg-type]
        assert calls == [("nodelay", True), ("open", "k1")]  # once: the second install kept the first wrapper
    finally:
        KernelWebsocketHandler.open = real  # type: ignore[method-assign]


def test_markdown_numbered_items_with_continuation_lines_keep_their_numbers() -> None:
    # the server's report: each finding is "N. **SEVERITY** title  " then an indented "_Fix:_" line
    md = "## Findings\n\n1. **WARNING** first  \n   _Fix:_ do a\n2. **INFO** second  \n   _Fix:_ do b\n\ntext\n\n3. third\n"
    html = markdown_to_html(md)
    assert html.count("<ol") == 2 and html.count("<li>") == 3
    assert "<li><strong>WARNING</strong> first<br><em>Fix:</em> do a</li>" in html
    assert '<ol start="3">' in html  # a list that starts at 3 reads 3, not 1
    assert "<p>" in html and "do b</li>" in html
