"""A Jupyter server extension: TCP_NODELAY on kernel websockets.

jupyter_server leaves Nagle's algorithm on for the kernel websocket, so after a kernel
message goes out (the "busy" status, say) the next small one (a widget's reply) waits
for the browser's delayed ACK, up to 40 ms on Linux, before it leaves. Every widget
round trip pays it at random. This extension turns Nagle off on each kernel websocket
as it opens (the same as `WebSocketHandler.set_nodelay(True)` in tornado's docs);
nothing else changes.

Enabled by `pip install nsys-ai-native` (etc/jupyter/jupyter_server_config.d/nsys_ai_native.json);
`jupyter server extension disable nsys_ai_native` (or NSYS_AI_NODELAY=0 in the server's
environment) turns it off.
"""
from __future__ import annotations

import os
from typing import Any

_MARK = "_nsys_ai_nodelay"


def install_nodelay() -> bool:
    """Patches jupyter_server's kernel websocket handler; False when it is not there."""
    try:
        from jupyter_server.services.kernels.websocket import KernelWebsocketHandler
    except ImportError:
        return False
    orig = KernelWebsocketHandler.open
    if getattr(orig, _MARK, False):
        return True

    async def open(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            self.set_nodelay(True)
        except Exception:  # never keep a kernel connection from opening
            pass
        return await orig(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    setattr(open, _MARK, True)
    open.__doc__ = orig.__doc__
    KernelWebsocketHandler.open = open  # type: ignore[method-assign]
    return True


def _load_jupyter_server_extension(serverapp: Any) -> None:
    if os.environ.get("NSYS_AI_NODELAY") == "0":  # for side-by-side measurements
        serverapp.log.info("nsys_ai_native: TCP_NODELAY on kernel websockets off (NSYS_AI_NODELAY=0)")
        return
    ok = install_nodelay()
    serverapp.log.info("nsys_ai_native: TCP_NODELAY on kernel websockets %s", "on" if ok else "unavailable")
