"""`profile/diff` from Python: `Profile.diff(other)` returns a `Diff` (docs/diff.md).

A `Diff` is the result dict (index it, serialize it) with the verdict first and
DataFrames for the components, the ranked deltas and the per-iteration values;
it renders as markdown/HTML in a notebook and as text in a console.
"""
from __future__ import annotations

from typing import Any, Optional

from ._rich import RichResult, _ns

COMPONENTS = ("step", "compute", "ncclExposed", "idle", "copies", "launchOverhead")


def _pct(v: Any) -> str:
    return f"{v:+.1f}%" if isinstance(v, (int, float)) else "-"


def _cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


class Diff(RichResult):
    """`profile/diff` result. `.verdict`, `.comparable`, `.components`, `.deltas`,
    `.iterations` (DataFrames when pandas is installed, else lists of dicts),
    `.gate` (None without thresholds) and `.text`."""

    _markdown_keys = ()

    @property
    def verdict(self) -> str:
        """faster, slower, no_change, incomparable or unknown (the step time's verdict)."""
        return str((self.get("verdict") or {}).get("overall", "unknown"))

    @property
    def comparable(self) -> bool:
        return bool((self.get("comparability") or {}).get("comparable"))

    @property
    def text(self) -> str:
        return str((self.get("summary") or {}).get("text", ""))

    @property
    def gate(self) -> Optional[dict]:
        return self.get("gate")

    def show(self, height: int = 640) -> Any:
        """The diff view as a widget (nsys_ai_native.views: the VS Code diff view's code): both
        timelines on one clock aligned on the steady state, zoom linked, the ranked deltas."""
        from .views import diff_result_view
        return diff_result_view(self, height=height)

    @property
    def components(self) -> Any:
        """One row per component: base/compare median and MAD, delta, noise floor, p-value, verdict."""
        rows = []
        for c in self.get("components") or []:
            b, k = c.get("base") or {}, c.get("compare") or {}
            rows.append({"component": c.get("name"), "baseMedianNs": b.get("medianNs"), "compareMedianNs": k.get("medianNs"),
                         "deltaNs": c.get("deltaNs"), "deltaPct": c.get("deltaPct"), "noiseNs": c.get("noiseNs"),
                         "baseMadNs": b.get("madNs"), "compareMadNs": k.get("madNs"), "baseN": b.get("n"),
                         "compareN": k.get("n"), "pValue": c.get("pValue"), "confidence": c.get("confidence"),
                         "verdict": c.get("verdict")})
        return self._frame(rows)

    @property
    def deltas(self) -> Any:
        """The ranked deltas of this page, evidence windows flattened (baseStart, baseEnd, compareStart, compareEnd)."""
        rows = []
        for x in self.get("deltas") or []:
            r = {k: v for k, v in x.items() if k not in ("evidence", "launch")}
            ev = x.get("evidence") or {}
            for side in ("base", "compare"):
                w = ev.get(side) or {}
                r[side + "Start"], r[side + "End"] = w.get("start"), w.get("end")
            if "launch" in x:
                r["launch"] = x["launch"]
            rows.append(r)
        return self._frame(rows)

    @property
    def iterations(self) -> Any:
        """Per-iteration values of both runs: side, index, start, end, warmup, then one column per component."""
        its = self.get("iterations") or {}
        rows = [{"side": side, **it} for side in ("base", "compare") for it in its.get(side) or []]
        return self._frame(rows)

    @staticmethod
    def _frame(rows: list) -> Any:
        from ._frames import frame, have_pandas
        return frame(rows) if have_pandas() else rows

    def _fallback_markdown(self) -> str:
        def name(side: str) -> str:
            s = self.get(side) or {}
            g = s.get("gpus") or {}
            return (f"`{s.get('file') or side}` ({g.get('model') or 'GPU unknown'} x{g.get('count', 0)}, "
                    f"{s.get('steady', 0)} steady iterations)")

        cm = self.get("comparability") or {}
        lines = ["### diff", "", f"- base: {name('base')}", f"- compare: {name('compare')}", "",
                 f"**{str((self.get('verdict') or {}).get('text', ''))}**", "",
                 f"Comparability {cm.get('score', 0):.2f} ({'comparable' if cm.get('comparable') else 'NOT comparable'})"]
        lines += [f"- [{r.get('severity')}] {_cell(r.get('message'))}" for r in cm.get("reasons") or []]
        lines += ["", "| component | base | compare | delta | noise | confidence | verdict |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        for c in self.get("components") or []:
            conf = c.get("confidence")
            lines.append(f"| {c.get('name')} | {_ns((c.get('base') or {}).get('medianNs'))} | "
                         f"{_ns((c.get('compare') or {}).get('medianNs'))} | {_ns(c.get('deltaNs'))} "
                         f"({_pct(c.get('deltaPct'))}) | {_ns(c.get('noiseNs'))} | "
                         f"{'-' if conf is None else f'{100 * conf:.1f}%'} | {c.get('verdict')} |")
        deltas = (self.get("deltas") or [])[:20]
        if deltas:
            lines += ["", f"Where it changed (per iteration; {len(deltas)} of {self.get('deltasTotal', len(deltas))})", "",
                      "| kind | change | name | base | compare | delta |", "|---|---|---|---:|---:|---:|"]
            for x in deltas:
                lines.append(f"| {x.get('kind')} | {x.get('change')} | `{_cell(x.get('label'))[:80]}` | "
                             f"{_ns(x.get('baseNs'))} | {_ns(x.get('compareNs'))} | {_ns(x.get('deltaNs'))} "
                             f"({_pct(x.get('deltaPct'))}) |")
        g = self.gate
        if g:
            lines += ["", f"**Gate: {g.get('status')}**"] + [f"- {_cell(f.get('message'))}" for f in g.get("failures") or []]
        return "\n".join(lines)


def diff_params(thresholds: Optional[dict] = None, limit: Optional[int] = None, offset: Optional[int] = None,
                kinds: Optional[list] = None, iteration_limit: Optional[int] = None) -> dict:
    """The optional params of profile/diff from Python names."""
    p: dict[str, Any] = {}
    if thresholds is not None:
        p["thresholds"] = thresholds
    if limit is not None:
        p["limit"] = int(limit)
    if offset is not None:
        p["offset"] = int(offset)
    if kinds is not None:
        p["kinds"] = list(kinds)
    if iteration_limit is not None:
        p["iterationLimit"] = int(iteration_limit)
    return p
