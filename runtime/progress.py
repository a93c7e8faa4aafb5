"""Progress on stderr (rich) for sweeps and long runs; silent when stderr is not a
terminal or the user asked for --quiet, so that pipes, logs and tests stay clean.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def progress_console(quiet: bool = False, stream: TextIO | None = None,
                     force_terminal: bool | None = None) -> Console | None:
    """A console on stderr when progress should show, else None."""
    console = Console(file=stream or sys.stderr, force_terminal=force_terminal)
    if quiet or not console.is_terminal:
        return None
    return console


class Steps:
    """What a loop calls once per finished step; does nothing when progress is off."""

    def __init__(self, progress: Progress | None = None, task: Any = None):
        self.progress, self.task = progress, task

    def advance(self, description: str | None = None) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=1, description=description)


@contextmanager
def progress_bar(total: int, description: str, console: Console | None) -> Iterator[Steps]:
    """A bar of `total` steps on `console`, or a silent Steps when console is None."""
    if console is None:
        yield Steps()
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        yield Steps(progress, progress.add_task(description, total=total))


@contextmanager
def status(message: str, console: Console | None) -> Iterator[None]:
    """A spinner while one long step (a big simulation) runs."""
    if console is None:
        yield
        return
    with console.status(message):
        yield
