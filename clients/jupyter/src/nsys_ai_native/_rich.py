"""Results that display themselves in a notebook (markdown and HTML)."""
from __future__ import annotations

import html
import re
from typing import Any


def _inline(text: str) -> str:
    """Escapes text and renders `code`, **bold**, *em*/_em_ spans and backslash escapes."""
    out: list[str] = []
    for part in re.split(r"(`[^`]+`)", text):
        if len(part) > 1 and part.startswith("`") and part.endswith("`"):
            out.append("<code>" + html.escape(part[1:-1], quote=False) + "</code>")
            continue
        # protect backslash-escaped punctuation from the emphasis rules
        s = re.sub(r"\\([!-/:-@\[-`{-~])", lambda m: f"\x00{ord(m.group(1))}\x00", part)  # ASCII punctuation
        s = html.escape(s, quote=False)
        s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
        s = re.sub(r"(?<![*\w])\*([^*\s][^*]*)\*(?!\w)", r"<em>\1</em>", s)
        s = re.sub(r"(?<![\w])_([^_\s][^_]*)_(?![\w])", r"<em>\1</em>", s)
        s = re.sub("\x00(\\d+)\x00", lambda m: html.escape(chr(int(m.group(1))), quote=False), s)
        out.append(s)
    return "".join(out)


def markdown_to_html(md: str) -> str:
    """A small markdown renderer for the server's markdown (headings, lists, tables, code).

    Front ends render `_repr_markdown_` themselves; this HTML is for those that
    only take HTML (nbconvert to HTML, some viewers) and keeps everything escaped.
    """
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    in_list: str | None = None

    def close_list() -> None:
        nonlocal in_list
        if in_list:
            out.append(f"</{in_list}>")
            in_list = None

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            close_list()
            code: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            out.append("<pre><code>" + html.escape("\n".join(code)) + "</code></pre>")
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?[\s:|-]+\|?\s*$", lines[i + 1]) \
                and "-" in lines[i + 1]:
            close_list()
            head = [c.strip() for c in stripped.strip("|").split("|")]
            out.append("<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead><tbody>")
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                out.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in cells) + "</tr>")
                i += 1
            out.append("</tbody></table>")
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if m:
            close_list()
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif re.match(r"^[-*+]\s+", stripped):
            if in_list != "ul":
                close_list()
                out.append("<ul>")
                in_list = "ul"
            out.append("<li>" + _inline(re.sub(r"^[-*+]\s+", "", stripped)) + "</li>")
        elif re.match(r"^\d+[.)]\s+", stripped):
            if in_list != "ol":
                close_list()
                first = int(re.match(r"^(\d+)", stripped).group(1))  # type: ignore[union-attr]
                out.append("<ol>" if first == 1 else f'<ol start="{first}">')
                in_list = "ol"
            out.append("<li>" + _inline(re.sub(r"^\d+[.)]\s+", "", stripped)) + "</li>")
        elif in_list and line[:1] in (" ", "\t"):
            # an indented continuation line belongs to the list item above it (the report's
            # "_Fix:_" lines): a line break inside that item, so the list goes on numbering
            out[-1] = out[-1][: -len("</li>")] + "<br>" + _inline(stripped) + "</li>"
        elif not stripped:
            close_list()
        else:
            close_list()
            out.append(f"<p>{_inline(stripped)}</p>")
        i += 1
    close_list()
    return "<div class=\"nsys-ai\">" + "\n".join(out) + "</div>"


class RichResult(dict):  # type: ignore[type-arg]
    """A result dict that shows its markdown in a notebook.

    It is an ordinary dict (index it, serialize it); `.markdown` is the text shown.
    """

    _markdown_keys: tuple[str, ...] = ("markdown", "rendered", "summaryMarkdown")

    @property
    def markdown(self) -> str:
        for k in self._markdown_keys:
            v = self.get(k)
            if isinstance(v, str) and v.strip():
                return v
        return self._fallback_markdown()

    def _fallback_markdown(self) -> str:
        return "```json\n" + _short_json(dict(self)) + "\n```"

    def _repr_markdown_(self) -> str:
        return self.markdown

    def _repr_html_(self) -> str:
        return markdown_to_html(self.markdown)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Plain-text front ends (a terminal IPython) show the markdown, not the dict."""
        printer.text(self.markdown if not cycle else f"{type(self).__name__}(...)")


def _short_json(obj: Any, limit: int = 4000) -> str:
    import json
    s = json.dumps(obj, indent=2, default=str)
    return s if len(s) <= limit else s[:limit] + "\n..."


class Explanation(RichResult):
    """`kernel/explain` result; displays its hover markdown."""


class Report(RichResult):
    """Root-cause report; displays the server's rendered markdown (findings otherwise)."""

    def _fallback_markdown(self) -> str:
        lines = ["# nsys-ai report", ""]
        for f in self.get("findings") or []:
            lines.append(f"- **{f.get('severity', '')}** {f.get('title', '')}: {f.get('recommendation', '')}")
        if len(lines) == 2:
            lines.append("No findings.")
        return "\n".join(lines)

    @property
    def findings(self) -> Any:
        from ._frames import frame, have_pandas
        rows = list(self.get("findings") or [])
        return frame(rows) if have_pandas() else rows


def _ns(v: Any) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    a = abs(x)
    if a >= 1e9:
        return f"{x / 1e9:.3g} s"
    if a >= 1e6:
        return f"{x / 1e6:.3g} ms"
    if a >= 1e3:
        return f"{x / 1e3:.3g} us"
    return f"{x:.0f} ns"

