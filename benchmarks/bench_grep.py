"""Grep and Glob on a 10,000-file tree: ripgrep against the pure-Python engine.

Run: python benchmarks/bench_grep.py [--files 10000] [--repeat 3]
Builds the tree in a temporary directory (removed afterwards), runs each case through
the tools' own ``call`` with each engine, checks that both engines return the same text,
and prints the median wall time per case.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nbtoolsched._tool._context import ToolContext
from nbtoolsched.tools.files._glob import GlobTool
from nbtoolsched.tools.files._grep import GrepTool
from nbtoolsched.tools.files._ripgrep import find_rg  # noqa: E402

WORDS = "alpha beta gamma delta value result config handler request session cache token index".split()

CASES: list[tuple[str, str, dict[str, object]]] = [
    ("Grep files_with_matches 'TODO'", "Grep", {"pattern": "TODO"}),
    ("Grep content 'def handler_\\d+' -n", "Grep", {"pattern": r"def handler_\d+", "output_mode": "content"}),
    ("Grep count 'import' glob=*.py", "Grep", {"pattern": "import", "output_mode": "count", "glob": "*.py"}),
    ("Grep content -i 'session' -C 1 head 200", "Grep",
     {"pattern": "session", "output_mode": "content", "-i": True, "-C": 1, "head_limit": 200}),
    ("Grep files type=md 'token'", "Grep", {"pattern": "token", "type": "md"}),
    ("Glob '**/*.py'", "Glob", {"pattern": "**/*.py"}),
]


def build_tree(root: Path, count: int, seed: int = 7) -> None:
    """``count`` files in 100 directories, mostly Python, some ignored by .gitignore."""
    rng = random.Random(seed)
    (root / ".gitignore").write_text("generated/\n*.log\n")
    for i in range(count):
        folder = root / ("generated" if i % 50 == 0 else f"pkg{i % 100:02}") / f"sub{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = rng.choice([".py"] * 6 + [".md", ".txt", ".log", ".js"])
        lines = ["import os", "import sys", ""]
        for j in range(rng.randint(20, 60)):
            word = rng.choice(WORDS)
            if j % 9 == 0:
                lines.append(f"def handler_{rng.randint(0, 999)}({word}):")
            elif rng.random() < 0.01:
                lines.append(f"    # TODO: revisit the {word} path")
            else:
                lines.append(f"    {word} = compute_{rng.choice(WORDS)}({rng.randint(0, 10**6)})  # Session {word}")
        (folder / f"file{i}{suffix}").write_text("\n".join(lines) + "\n")


async def time_case(tool: object, args: dict[str, object], ctx: ToolContext, repeat: int) -> tuple[float, str]:
    parsed = tool.input_model.model_validate(args)  # type: ignore[attr-defined]
    times, text = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        output = await tool.call(parsed, ctx)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - start)
        text = output.content if isinstance(output.content, str) else str(output.content)
    return statistics.median(times), text


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    engines = ["rg", "python"] if find_rg() else ["python"]
    with tempfile.TemporaryDirectory(prefix="bench-grep-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        build_tree(root, opts.files)
        print(f"built {opts.files} files in {time.perf_counter() - start:.1f}s; engines: {', '.join(engines)}\n")
        ctx = ToolContext(root)
        header = f"{'case':<44}" + "".join(f"{e + ' (ms)':>14}" for e in engines) + f"{'ratio':>9}  same"
        print(header)
        print("-" * len(header))
        for label, name, args in CASES:
            row, texts = [], []
            for engine in engines:
                tool = GrepTool(engine=engine) if name == "Grep" else GlobTool(engine=engine)
                seconds, text = await time_case(tool, args, ctx, opts.repeat)
                row.append(seconds)
                texts.append(text)
            ratio = f"{row[-1] / row[0]:>8.1f}x" if len(row) == 2 and row[0] else f"{'':>9}"
            same = "yes" if len(set(texts)) == 1 else "NO"
            print(f"{label:<44}" + "".join(f"{s * 1000:>14.0f}" for s in row) + f"{ratio}  {same}")


if __name__ == "__main__":
    asyncio.run(main())
