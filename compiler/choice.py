"""How `auto` chose the program's algorithms: per statement, or by simulating the program.

runtime/progchoice.py searches; the compiler driver keeps its answer in `Compiled.choice`,
and `run --json`, the report and `phalanx run` say which method was used and why.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

PER_STATEMENT = "per statement"  # each statement's least time, alone (the cost model's)
BY_PROGRAM = "program simulated"  # runtime/progchoice.py searches the whole program


@dataclass(frozen=True)
class ProgramChoice:
    """How `auto` chose: `method` (PER_STATEMENT or BY_PROGRAM), why, and for a search its
    evaluations, the events it spent of its budget, the simulated total of the
    statement-by-statement choice and of the chosen one."""

    method: str
    reason: str
    algorithms: dict[int, str] = dataclasses.field(default_factory=dict)  # line -> chosen
    evaluations: int = 0
    events_spent: int = 0
    budget_events: int = 0
    per_statement_total_s: float | None = None
    chosen_total_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "reason": self.reason, "evaluations": self.evaluations,
                "events_spent": self.events_spent, "budget_events": self.budget_events,
                "per_statement_total_s": self.per_statement_total_s,
                "chosen_total_s": self.chosen_total_s,
                "algorithms": {str(line): a for line, a in sorted(self.algorithms.items())}}

    def note(self) -> str:
        """One line for `phalanx run` and the report."""
        if self.method == PER_STATEMENT:
            return f"auto chose per statement: {self.reason}"
        gain = ""
        if self.per_statement_total_s and self.chosen_total_s is not None:
            gain = (f": total {self.chosen_total_s * 1e3:.6g} ms simulated, against "
                    f"{self.per_statement_total_s * 1e3:.6g} ms for the per-statement choice")
        return (f"auto chose for the program by simulating it ({self.evaluations} programs, "
                f"{self.events_spent} of {self.budget_events} budgeted events){gain}")
