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

import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass, field
from types import FrameType
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
        except Exception as error:  # the learner's code failed, or what it returned: name which, keep checking
            verdict.problems.append(f"case {verdict.cases}: {_raised(error)}")
    return verdict


_TEACHING = os.path.dirname(os.path.abspath(__file__))


def _library_dirs() -> list[str]:
    """Where code that is neither the learner's nor the checkers' lives: the standard library,
    site-packages, the nbtoolsched package."""
    dirs = {os.path.abspath(p) for key in ("stdlib", "platstdlib", "purelib", "platlib")
            if (p := sysconfig.get_paths().get(key))}
    package = sys.modules.get("nbtoolsched")
    if package is not None and getattr(package, "__file__", None):
        dirs.add(os.path.dirname(os.path.abspath(package.__file__ or "")))
    return sorted(dirs)


def _inside(filename: str, folders: Iterable[str]) -> bool:
    path = os.path.abspath(filename)
    return any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in folders)


def _raised(error: Exception) -> str:
    """The sentence for an exception: in the learner's code, named at the learner's own line;
    in the checker reading the learner's answer, the answer's wrong shape."""
    tb = error.__traceback__
    frames: list[tuple[FrameType, int]] = []
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    library = _library_dirs()

    def theirs(frame: FrameType) -> bool:
        name = frame.f_code.co_filename
        return not (_inside(name, [_TEACHING]) or _inside(name, library) or name.startswith("<frozen"))

    learner = [(f, n) for f, n in frames if theirs(f)]
    said = f"{type(error).__name__}: {error}"
    if learner:
        frame, lineno = learner[-1]
        line = linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals).strip()
        where = f"line {lineno} in {frame.f_code.co_name}" + (f": {line}" if line else "")
        return f"your code raised {said} ({where})"
    for frame, _ in reversed(frames):  # the checker's own frame holds the answer it was reading
        if _inside(frame.f_code.co_filename, [_TEACHING]):
            for name in ("raw", "got"):
                if name in frame.f_locals:
                    shown = repr(frame.f_locals[name])
                    shown = shown if len(shown) <= 80 else shown[:79] + "…"
                    return f"your function returned something of the wrong shape: {shown} (reading it raised {said})"
    return f"your function returned something of the wrong shape (reading it raised {said})"
