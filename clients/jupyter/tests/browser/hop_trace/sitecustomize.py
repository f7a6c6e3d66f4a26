"""Per-hop timestamps of the widget's kernel -> browser messages (bench_widget.py --hops).

Put on PYTHONPATH of `jupyter lab` (the kernel inherits it) with NSYS_AI_HOP_TRACE=DIR; it
patches, as they are imported, ipykernel's IOPub thread and jupyter_server's kernel websocket
and appends one line per widget message carrying a "sentAt" (the kernel's wall clock in ms,
also the message's key) to DIR/hops-<pid>.txt:

  K sentAt queued io_start io_end bytes   ipykernel: the caller's send_multipart, the IOPub
                                          thread's zmq send begins and returns
  S sentAt in out bytes                   jupyter_server: handle_outgoing_message begins, returns
                                          (the websocket write of the whole frame is inside)

The browser side (the websocket's message event) is recorded by bench.mjs
(NSYS_AI_WS_TRACE=1). Diagnostics only: never loaded outside the bench.
"""
import importlib.abc
import importlib.util
import os
import re
import sys
import time

_DIR = os.environ.get("NSYS_AI_HOP_TRACE")
_RX = re.compile(rb'"sentAt":\s*([0-9.]+)')


def _log(line):
    with open(os.path.join(_DIR, f"hops-{os.getpid()}.txt"), "a") as f:
        f.write(line + "\n")


def _sent(parts):
    for p in parts[:8]:
        b = p if isinstance(p, bytes) else bytes(getattr(p, "bytes", p))
        if len(b) < 8192:
            m = _RX.search(b)
            if m:
                return m.group(1).decode()
    return None


def _size(parts):
    return sum(len(p) if isinstance(p, (bytes, bytearray, memoryview)) else len(getattr(p, "bytes", b""))
               for p in parts)


def _now():
    return f"{time.time() * 1e3:.3f}"


def _patch_iostream(mod):
    T = mod.IOPubThread
    send, really = T.send_multipart, T._really_send
    queued = {}

    def send_multipart(self, msg, *a, **k):
        s = _sent(msg)
        if s:
            queued[s] = _now()
        return send(self, msg, *a, **k)

    def _really_send(self, msg, *a, **k):
        s = _sent(msg)
        t0 = _now()
        r = really(self, msg, *a, **k)
        if s:
            _log(f"K {s} {queued.pop(s, t0)} {t0} {_now()} {_size(msg)}")
        return r

    T.send_multipart, T._really_send = send_multipart, _really_send


def _patch_channels(mod):
    C = mod.ZMQChannelsWebsocketConnection
    orig = C.handle_outgoing_message

    def handle_outgoing_message(self, stream, msg_list):
        s = _sent(msg_list)
        t0 = _now()
        r = orig(self, stream, msg_list)
        if s:
            _log(f"S {s} {t0} {_now()} {_size(msg_list)}")
        return r

    C.handle_outgoing_message = handle_outgoing_message


_PATCHES = {"ipykernel.iostream": _patch_iostream,
            "jupyter_server.services.kernels.connection.channels": _patch_channels}


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module, exec_module=exec_module, name=name):
            exec_module(module)
            try:
                _PATCHES[name](module)
            except Exception as e:  # a changed upstream: no trace, never a broken server
                print(f"nsys-ai hop trace: cannot patch {name}: {e}", file=sys.stderr)

        spec.loader.exec_module = exec_and_patch
        return spec


if _DIR:
    sys.meta_path.insert(0, _Finder())
