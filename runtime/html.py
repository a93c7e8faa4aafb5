"""Self-contained HTML pages for reports: inline SVG and CSS, no script, no network.

`run_page` lays out a run (program, summary, candidates, schedule, timeline,
utilisation); `sweep_page` a sweep. Pictures come in as SVG text and are inlined with
their ids prefixed, so that several pictures on one page cannot clash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Any

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 1180px; margin: 0 auto; padding: 0 24px 48px; }
header { border-bottom: 2px solid #3182bd; margin-bottom: 8px; }
nav a { margin-right: 14px; }
h1 { font-size: 24px; margin: 18px 0 4px; } h2 { font-size: 20px; margin-top: 32px; }
h3 { font-size: 16px; }
table { border-collapse: collapse; margin: 8px 0 12px; }
th, td { border: 1px solid #ccc; padding: 3px 9px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.chosen td { background: #eaf3fb; font-weight: 600; }
pre.listing { background: #f7f7f7; padding: 10px; border: 1px solid #ddd; overflow-x: auto; }
pre.listing .ln { color: #999; display: inline-block; width: 3em; user-select: none; }
pre.listing a { background: #fff3c4; color: #222; }
.ok { color: #1a7f37; font-weight: 600; } .bad { color: #c62828; font-weight: 600; }
figure { margin: 12px 0 24px; } figcaption { color: #555; font-size: 13px; }
.pic { overflow: auto; border: 1px solid #eee; }
.pic.wide { max-height: 900px; }
.pic svg { display: block; max-width: 100%; height: auto; }
.pic.wide svg { max-width: none; }
.note { color: #555; font-style: italic; }
"""

_PROLOG = re.compile(r"^\s*(<\?xml[^>]*>|<!DOCTYPE[^>]*>|<!--.*?-->|\s)*", re.S)


@dataclass(frozen=True)
class Picture:
    """An SVG picture of the page, also written to `file` next to index.html."""

    key: str  # anchor and id prefix
    file: str
    svg: str
    caption: str
    wide: bool = False  # keep the natural size (scroll) instead of fitting the width


def inline_svg(svg: str, prefix: str) -> str:
    """The <svg> element of an SVG file, with every id and reference to it prefixed."""
    body = _PROLOG.sub("", svg, count=1)
    body = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', body)
    body = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", body)
    return re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', body)


def figure(p: Picture) -> str:
    cls = "pic wide" if p.wide else "pic"
    return (f'<figure id="{p.key}" class="picture"><div class="{cls}">{inline_svg(p.svg, p.key)}</div>'
            f'<figcaption>{escape(p.caption)} (<a href="{p.file}">{p.file}</a>)</figcaption></figure>')


def table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    """An HTML table; cells are HTML already (escape text before)."""
    head = f"<thead><tr>{''.join(f'<th>{h}</th>' for h in header)}</tr></thead>" if header else ""
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        cells = "".join(f'<td class="num">{c}</td>' if _numeric(c) else f"<td>{c}</td>" for c in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table>{head}<tbody>{''.join(body)}</tbody></table>"


def _numeric(cell: str) -> bool:
    return bool(re.fullmatch(r"[-+0-9.,e%× ]+", cell))


def ms(time_s: float | None) -> str:
    return "—" if time_s is None else f"{time_s * 1e3:.6f}"


def page(title: str, sections: list[tuple[str, str, str]]) -> str:
    """A whole page: (anchor, heading, body HTML) per section, with a navigation bar."""
    nav = "".join(f'<a href="#{a}">{escape(h)}</a>' for a, h, _ in sections)
    parts = [f'<section id="{a}"><h2>{escape(h)}</h2>{body}</section>' for a, h, body in sections]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{escape(title)}</h1><nav>{nav}</nav></header>"
            + "".join(parts) + "</body></html>\n")


def listing(source: str, links: dict[int, tuple[str, str]]) -> str:
    """The program with line numbers; `links` maps a line to (anchor, tooltip)."""
    out = []
    for n, text in enumerate(source.splitlines(), start=1):
        code = escape(text)
        if n in links:
            anchor, tip = links[n]
            code = f'<a href="#{anchor}" title="{escape(tip)}">{code}</a>'
        out.append(f'<span class="ln">{n}</span>{code}')
    return '<pre class="listing">' + "\n".join(out) + "</pre>"


def params_table(target: dict[str, Any]) -> str:
    rows = [[escape(str(k)), escape(str(v))] for k, v in target.get("params", {}).items()]
    return table(["parameter", "value"], rows)


def verdict(ok: bool) -> str:
    return '<span class="ok">verified</span>' if ok else '<span class="bad">NOT verified</span>'
