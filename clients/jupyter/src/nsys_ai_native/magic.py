"""`%load_ext nsys_ai_native` and the `%nsys` line magic.

    %nsys FILE            open FILE; shows a summary, returns the Profile
    %nsys show FILE       the interactive timeline
    %nsys tree FILE       the NVTX tree widget
    %nsys report FILE     the root-cause report
    %nsys top FILE        the top kernels
    %nsys profile CMD ... captures CMD with nsys (nsys_ai_native.profile), returns the Profile
    %nsys runs            the workspace's run history (nsys_ai_native.runs)
"""
from __future__ import annotations

import shlex
from typing import Any

_ACTIONS = ("show", "tree", "report", "top", "info")


def nsys_magic(line: str) -> Any:
    from .profile import open as open_profile
    args = shlex.split(line)
    if args and args[0] == "profile":
        from .runs import profile
        if len(args) < 2:
            raise ValueError("usage: %nsys profile CMD [ARGS ...]")
        return profile(args[1:])
    if args == ["runs"]:
        from .runs import runs
        return runs()
    if not args:
        raise ValueError("usage: %nsys [show|tree|report|top|info] FILE")
    action = "open"
    if len(args) > 1 and args[0] in _ACTIONS:
        action, args = args[0], args[1:]
    if len(args) != 1:
        raise ValueError("usage: %nsys [show|tree|report|top|info] FILE")
    prof = open_profile(args[0])
    if action == "open":
        return prof
    if action == "show":
        return prof.show()
    if action == "tree":
        return prof.tree()
    if action == "report":
        return prof.report()
    if action == "top":
        return prof.top_kernels()
    return prof.info()


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magic_function(nsys_magic, magic_kind="line", magic_name="nsys")


def unload_ipython_extension(ipython: Any) -> None:  # magics cannot be unregistered; nothing to undo
    pass
