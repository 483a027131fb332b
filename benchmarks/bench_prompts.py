"""Prompts the sandbox saves: the labelled shell corpus judged under a real project's settings.

Every command of tests/shell/corpus.py (735 real-world command lines) is decided by the
real permission engine in default mode, in a small git repository holding `.env` files,
under settings a real project writes (allow rules for the usual tools, a deny on every
`.env`), three ways in one run:

* the sandbox off (``NBTOOLSCHED_SANDBOX=off``: what a machine without bubblewrap gets);
* the sandbox on, prompts as without it (our default);
* the sandbox on with ``autoAllowBashIfSandboxed`` (Claude Code's default once it is enabled).

It prints how many commands ask, how many of those the corpus labels read-only, and the
recall of the read-only verdict (commands labelled read-only that run unasked and in
parallel), which the sandbox does not change: it changes what must be asked about.

    python benchmarks/bench_prompts.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbtoolsched as nts  # noqa: E402
from nbtoolsched.tools import BashTool  # noqa: E402
from tests.shell.corpus import CORPUS  # noqa: E402

# A real project's settings: the tools it runs every day allowed, every .env denied.
SETTINGS = {
    "allow": ["Bash(git add:*)", "Bash(git commit:*)", "Bash(git diff:*)", "Bash(git log:*)", "Bash(npm test:*)",
              "Bash(npm run:*)", "Bash(pytest:*)", "Bash(python -m pytest:*)", "Bash(grep:*)", "Bash(rg:*)",
              "Bash(ls:*)", "Bash(cat:*)", "Bash(find:*)", "Bash(make:*)"],
    "deny": ["Read(//**/.env)", "Read(./secrets/**)"],
}


def project(root: Path) -> Path:
    proj = root / "proj"
    for folder in ("src", "tests", "secrets", "docs"):
        (proj / folder).mkdir(parents=True)
    (proj / ".env").write_text("TOKEN=x\n")
    (proj / "src" / ".env").write_text("TOKEN=y\n")
    (proj / "secrets" / "key.txt").write_text("k\n")
    (proj / "src" / "main.py").write_text("print(1)\n")
    (proj / "README.md").write_text("# readme\n")
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    return proj.resolve()


def judge(proj: Path, sandbox: dict[str, object] | None) -> tuple[int, int, int, float]:
    """(asks, asks among commands labelled read-only, read-only commands allowed, seconds)."""
    perms = nts.Permissions(cwd=proj, sandbox=sandbox, **SETTINGS)  # type: ignore[arg-type]
    bash = BashTool()
    asks = asks_read_only = allowed_read_only = 0
    started = time.perf_counter()
    for case in CORPUS:
        decision = perms.explain(bash, {"command": case.command}).behavior
        asks += decision == "ask"
        if case.read_only:
            asks_read_only += decision == "ask"
            allowed_read_only += decision == "allow" and bash.is_read_only_in(bash.input_model(command=case.command), str(proj))
    return asks, asks_read_only, allowed_read_only, time.perf_counter() - started


def main() -> int:
    labelled = sum(1 for c in CORPUS if c.read_only)
    with tempfile.TemporaryDirectory() as tmp:
        proj = project(Path(tmp))
        rows = []
        for label, env, sandbox in (("sandbox off", "off", None), ("sandbox on (prompts as without it)", "on", None),
                                    ("sandbox on, autoAllowBashIfSandboxed", "on", {"enabled": True})):
            os.environ["NBTOOLSCHED_SANDBOX"] = env
            rows.append((label, *judge(proj, sandbox)))
    os.environ.pop("NBTOOLSCHED_SANDBOX", None)
    print(f"{len(CORPUS)} commands ({labelled} labelled read-only), default mode, a project's settings "
          f"({len(SETTINGS['allow'])} allow rules, deny Read(//**/.env) and Read(./secrets/**))")
    print()
    print("| configuration | commands that ask | of them labelled read-only | read-only recall (unasked and parallel) | time |")
    print("|---|---:|---:|---:|---:|")
    for label, asks, asks_ro, allowed_ro, seconds in rows:
        print(f"| {label} | {asks} ({asks / len(CORPUS):.0%}) | {asks_ro} | {allowed_ro}/{labelled} "
              f"({allowed_ro / labelled:.1%}) | {seconds:.1f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
