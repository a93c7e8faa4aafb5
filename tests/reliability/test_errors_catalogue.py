"""docs/errors.md is a test: every entry's program and command give exactly its message.

Each entry has an optional ```phx program, a `Command: ...` line with its exit code and a
```text block with the expected first `error:` line (`…` stands for machine-dependent text).
Located errors must also put the caret under their column; syntax errors must read the same
from both parsers.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


@dataclass
class Entry:
    section: str
    title: str
    program: str | None
    command: str
    exit_code: int
    expected: str


def entries() -> list[Entry]:
    out, section = [], ""
    for block in re.split(r"^(?=## |### )", DOC.read_text(), flags=re.M):
        if block.startswith("## "):
            section = block.splitlines()[0][3:]
            continue
        if not block.startswith("### "):
            continue
        program = re.search(r"```phx\n(.*?)\n```", block, re.S)
        command = re.search(r"^Command: `(.+)` \(exit code (\d+)\)$", block, re.M)
        expected = re.search(r"```text\n(.+?)\n```", block, re.S)
        assert command and expected, f"entry {block.splitlines()[0]} lacks a command or a message"
        out.append(Entry(section, block.splitlines()[0][4:], program and program.group(1) + "\n",
                         command.group(1), int(command.group(2)), expected.group(1)))
    return out


ENTRIES = entries()


def matches(expected: str, line: str) -> bool:
    parts = expected.split("…")
    pattern = ".*".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, line) is not None


def run_entry(cli, tmp_path, monkeypatch, entry: Entry, extra: tuple[str, ...] = ()):
    monkeypatch.chdir(tmp_path)
    if entry.program is not None:
        (tmp_path / "prog.phx").write_text(entry.program)
    argv = shlex.split(entry.command)
    assert argv[0] == "phalanx"
    return cli(*argv[1:], *extra)


def test_catalogue_is_complete_enough():
    assert len(ENTRIES) >= 60
    assert len({e.title for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.title for e in ENTRIES])
def test_entry(cli, tmp_path, monkeypatch, entry: Entry):
    result = run_entry(cli, tmp_path, monkeypatch, entry)
    lines = result.err.splitlines()
    first = next((i for i, line in enumerate(lines) if "error:" in line), None)
    assert first is not None, result.err
    assert matches(entry.expected, lines[first]), f"{lines[first]!r} != {entry.expected!r}"
    assert result.code == entry.exit_code
    loc = re.match(r"prog\.phx:(\d+):(\d+): error:", lines[first])
    if loc:  # the source line, then the caret under the column
        line, col = int(loc.group(1)), int(loc.group(2))
        assert lines[first + 1] == "    " + entry.program.splitlines()[line - 1]
        assert lines[first + 2].index("^") == 4 + col - 1


SYNTAX = [e for e in ENTRIES if e.section.startswith("Syntax") and e.program is not None]


@pytest.mark.parametrize("entry", SYNTAX, ids=[e.title for e in SYNTAX])
def test_syntax_entries_read_the_same_from_antlr(cli, tmp_path, monkeypatch, entry: Entry):
    result = run_entry(cli, tmp_path, monkeypatch, entry, ("--parser", "antlr"))
    first = next(line for line in result.err.splitlines() if "error:" in line)
    assert matches(entry.expected, first)
