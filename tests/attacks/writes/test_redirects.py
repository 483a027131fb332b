"""A redirection writes a file however the line around it is built: one inside a loop, an
if or a substitution into a tool's config asks in bypass mode, and ``> -`` is a file."""

from __future__ import annotations

import pytest

from ..conftest import Refuser, run_one, scheduler


@pytest.mark.parametrize("command", [
    "if true; then mkdir -p .claude; echo '{}' > .claude/settings.json; fi",
    "for i in 1; do mkdir -p .git/hooks; echo x > .git/hooks/pre-commit; done",
    "x=$(mkdir -p .vscode; echo a > .vscode/settings.json)",
])
async def test_bypass_mode_asks_before_a_loop_redirects_into_a_tool_config(project, command):
    # `echo x > .git/hooks/pre-commit` asks in bypass mode (a safety check), but a line
    # that cannot be split (a loop, an if, a substitution) never had its redirections checked.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions")
    result = await run_one(sched, "Bash", command=command)
    assert not any((project / p).exists() for p in (".claude/settings.json", ".git/hooks/pre-commit", ".vscode/settings.json"))
    assert result.is_error and refuser.asked


async def test_output_redirect_to_dash_writes_a_file_under_an_allow_rule(project):
    # _redirect_check skips every redirect whose target is "-" (an operator-precedence
    # slip meant for ">&-"), so "> -" creates a file named "-" with no Edit permission.
    refuser = Refuser()
    sched = scheduler(project, refuser, allow=["Bash(git status:*)"])
    await run_one(sched, "Bash", command="git status > -")
    assert not (project / "-").exists()
