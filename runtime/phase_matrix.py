"""The schedule of a big machine as small multiples: per drawn phase, a source x destination
matrix coloured by the bytes each message carries.

Graphviz draws one edge per message, which past a few dozen nodes merges into one bundle;
a matrix stays readable at 64 and 256 nodes (an all-to-all phase is a shifted diagonal, a
broadcast tree a few rows). The same budget as the Graphviz dump applies: each
statement drawn once, sampled phases, at most MAX_PANELS panels, and the title says
what was left out.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps

from phalanx.compiler.schedule import Phase, Schedule
from phalanx.runtime.dot import DotLimits, drawn_schedules, sampled_phases
from phalanx.runtime.plots import empty_svg, new_figure, svg_of
from phalanx.runtime.utilisation import phase_messages

MAX_PANELS = 12  # panels in one picture
COLUMNS = 4


def phase_sizes(phase: Phase) -> list[tuple[int, int, int]]:
    """(source, destination, bytes) of each network message between distinct nodes."""
    return [(m[0].src, m[0].dst, sum(t.nbytes for t in m)) for m in phase_messages(phase)]


def _panels(schedules: list[Schedule], limits: DotLimits) -> tuple[list[tuple[Schedule, int, int]], str]:
    """(schedule, phase, runs) per panel and a note on what is left out."""
    drawn, note = drawn_schedules(schedules, limits)
    panels = []
    skipped = 0
    for s, runs in drawn:
        kept = sampled_phases(len(s.phases), limits.max_phases)
        skipped += len(s.phases) - len(kept)
        panels += [(s, k, runs) for k in kept]
    notes = [note] if note else []
    if skipped:
        notes.append(f"{skipped} phases not drawn (first, last and an even sample shown)")
    if len(panels) > MAX_PANELS:
        notes.append(f"{MAX_PANELS} of {len(panels)} panels drawn")
        panels = panels[:MAX_PANELS]
    return panels, "; ".join(notes)


def phase_matrix_svg(schedules: list[Schedule], title: str, limits: DotLimits | None = None) -> str:
    """Small multiples: one source x destination matrix per drawn phase."""
    panels, note = _panels(schedules, limits or DotLimits())
    if not panels:
        return empty_svg(title, "the program has no communication")
    ncols = min(COLUMNS, len(panels))
    nrows = -(-len(panels) // ncols)
    fig = new_figure(3.3 * ncols + 1.2, 3.3 * nrows + 0.9)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    sizes = [phase_sizes(s.phases[k]) for s, k, _ in panels]
    most = max((b for sent in sizes for _, _, b in sent), default=1)
    cmap = colormaps["viridis"].with_extremes(bad="white")
    image = None
    for ax, (s, k, runs), sent in zip(axes.flat, panels, sizes):
        grid = np.full((s.nprocs, s.nprocs), np.nan)
        if sent:
            src, dst, nbytes = np.array(sent).T
            grid[src, dst] = nbytes / 1024
        image = ax.imshow(grid, cmap=cmap, vmin=0, vmax=most / 1024, interpolation="nearest",
                          aspect="equal")
        ax.grid(visible=False)
        ran = f", {runs} runs" if runs > 1 else ""
        ax.set_title(f"line {s.line} {s.kind}{ran}\nphase {k} of {len(s.phases)}: "
                     f"{len(sent)} messages", fontsize=8)
        ax.set_xlabel("destination node", fontsize=7)
        ax.set_ylabel("source node", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.locator_params(nbins=5)
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    fig.suptitle(title + (f"\n{note}" if note else ""), fontsize=10)
    fig.colorbar(image, ax=axes, label="message size (KB); white: no message", shrink=0.8)
    return svg_of(fig)
