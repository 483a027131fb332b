"""What every exercise checker shares: run the learner's function, say in plain words what is wrong.

A chapter's checker (``teaching.partition.check_partition``, ...) builds cases, calls the
learner's function on each and collects *problems*: sentences that name the input, what the
learner's function gave and what it should give. ``Verdict`` prints the first few, or one
line saying that every case agreed. A stub that still raises ``NotImplementedError`` is "not
written yet", never a traceback, so a notebook runs top to bottom before anyone types.

    verdict = run_check("partition", cases, lambda case: problems_for(case))
    verdict.ok        # True when every case agreed
    print(verdict)    # "✓ partition: all 200 cases agree with Claude Code's rule"
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypeVar

__all__ = ["Verdict", "run_check"]

Case = TypeVar("Case")
SHOWN = 3  # problems printed; the rest are counted


@dataclass
class Verdict:
    """The outcome of one check: its name, how many cases ran, what was wrong."""

    name: str
    cases: int = 0
    problems: list[str] = field(default_factory=list)
    unwritten: bool = False
    agree: str = "agree"

    @property
    def ok(self) -> bool:
        return not self.problems and not self.unwritten and self.cases > 0

    def __str__(self) -> str:
        if self.unwritten:
            return f"✗ {self.name}: not written yet (it raised NotImplementedError). Fill in the cell above."
        if self.ok:
            return f"✓ {self.name}: all {self.cases} cases {self.agree}."
        if not self.problems:
            return f"✗ {self.name}: no case ran."
        lines = [f"✗ {self.name}: {len(self.problems)} of {self.cases} cases are wrong."]
        lines += [f"  - {p}" for p in self.problems[:SHOWN]]
        if len(self.problems) > SHOWN:
            lines.append(f"  ... and {len(self.problems) - SHOWN} more like these.")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


def run_check(name: str, cases: Iterable[Case], problems_for: Callable[[Case], Iterable[str]],
              *, agree: str = "agree") -> Verdict:
    """Run ``problems_for`` on every case; a case that raises is a problem that names the error.

    ``NotImplementedError`` from the first case means the stub is still empty: the verdict
    says so and stops (the other cases would all say the same)."""
    verdict = Verdict(name, agree=agree)
    for case in cases:
        verdict.cases += 1
        try:
            verdict.problems.extend(problems_for(case))
        except NotImplementedError:
            verdict.unwritten = True
            return verdict
        except Exception as error:  # the learner's code failed: name it, keep checking
            where = traceback.extract_tb(error.__traceback__)[-1]
            verdict.problems.append(f"case {verdict.cases}: your code raised {type(error).__name__}: {error} "
                                    f"(line {where.lineno}: {where.line})")
    return verdict
