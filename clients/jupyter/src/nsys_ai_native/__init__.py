"""nsys_ai_native: Nsight Systems profiles in Jupyter, served by `nsys-ai serve`.

    import nsys_ai_native
    p = nsys_ai_native.open("run.sqlite")
    p.top_kernels()      # DataFrame
    p.show()             # zoomable timeline widget
    p.report()           # root-cause report (markdown)

    nsys_ai_native.runs()       # the workspace's run history; nsys_ai_native.profile("python t.py") captures

`%load_ext nsys_ai_native` adds the `%nsys FILE` magic (`%nsys profile CMD ...` captures).
"""
from __future__ import annotations

from ._rich import Explanation, Report, RichResult
from .diff import Diff
from ._server import Server, configure, find_server, shutdown
from .errors import NsysAIError, RequestTooLargeError, ServerDiedError, ServerNotFoundError
from .magic import load_ipython_extension, unload_ipython_extension
from .profile import Profile, open
from .runs import compare_runs, note, profile, runs

__version__ = "0.1.0"


def _jupyter_server_extension_points() -> list[dict]:
    """The Jupyter server extension (TCP_NODELAY on kernel websockets: `_jupyter_server.py`)."""
    return [{"module": "nsys_ai_native._jupyter_server"}]


from . import _preload  # noqa: E402

_preload.start()  # in a notebook kernel: the widget module loads while the user opens a profile

__all__ = [
    "Diff", "Explanation", "NsysAIError", "Profile", "Report", "RichResult", "Server",
    "RequestTooLargeError", "ServerDiedError", "ServerNotFoundError", "compare_runs", "configure", "find_server",
    "load_ipython_extension", "note", "open", "profile", "runs", "shutdown", "unload_ipython_extension",
    "__version__",
]
