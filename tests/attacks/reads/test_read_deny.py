"""Read deny rules must stop every tool from printing a protected file: ways through Bash."""

from __future__ import annotations

import shutil

import pytest

from ..conftest import READ_DENIES, SECRET, Refuser, git, run_one, scheduler


async def test_proc_self_cwd_with_dotdot_reaches_a_denied_file(project):
    # paths_for_check folds "/proc/self/cwd/.." lexically (to /proc/self) and resolves
    # /proc/self in the Python process, while the kernel resolves it in the shell: the
    # path below is the project's .env for bash and some other path for the check.
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=READ_DENIES)
    command = f"tac /proc/self/cwd/../{project.name}/.env"
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text
    assert result.is_error


async def test_proc_self_cwd_reaches_secrets_folder(project):
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=f"rev /proc/thread-self/cwd/../{project.name}/secrets/key.txt")
    assert SECRET[::-1] not in result.text
    assert result.is_error


needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")


@needs_jq
async def test_jq_import_reads_a_denied_json_file(project):
    # jq's `import "path" as $x;` loads path + ".json"; the path is a JSON string, so
    # \u escapes hide it from the word scan (and the ".json" is never written at all).
    (project / "secrets" / "service-account.json").write_text(f'{{"private_key": "{SECRET}"}}\n')
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=READ_DENIES)
    result = await run_one(sched, "Bash", command="""jq -n 'import "s\\u0065crets/service-account" as $k; $k'""")
    assert SECRET not in result.text
    assert result.is_error


@needs_jq
async def test_jq_import_reads_a_denied_json_file_named_exactly(project):
    (project / "credentials.json").write_text(f'{{"token": "{SECRET}"}}\n')
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=["Read(credentials.json)"])
    result = await run_one(sched, "Bash", command="""jq -n 'import "credentials" as $c; $c'""")
    assert SECRET not in result.text
    assert result.is_error


async def test_grep_abbreviated_recursive_option_under_an_allow_rule(project):
    # GNU grep accepts any unambiguous prefix of a long option: --recur is --recursive.
    # shell_reads only knows the full spellings, so the tree is never judged.
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=READ_DENIES, allow=["Bash(grep:*)"])
    result = await run_one(sched, "Bash", command="grep --recur SECRET .")
    assert SECRET not in result.text
    result = await run_one(sched, "Bash", command="grep --derefer SECRET")
    assert SECRET not in result.text


@pytest.mark.parametrize("command", ["git status -vv", "git status --verbose --verbose"])
async def test_git_status_verbose_prints_the_diff_of_a_denied_file(project, command):
    # shell_reads counts `git status` as names-only; -v shows the staged diff and -vv the
    # working tree diff too, so a tracked secret that changed is printed in full.
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    (project / ".env").write_text(f"TOKEN=NEW-{SECRET}\n")
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert f"NEW-{SECRET}" not in result.text


async def test_git_log_bundled_patch_flag_prints_a_denied_file(project):
    # _git_shows_content looks for -p at the start of each option word; in the bundle
    # -sp the p comes second, and git applies it after -s: the whole patch history.
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "first")
    refuser = Refuser()
    sched = scheduler(project, refuser, deny=READ_DENIES)
    result = await run_one(sched, "Bash", command="git log -sp")
    assert SECRET not in result.text


@pytest.mark.parametrize("command", ["sed -n p .env", "tac .env", "git show HEAD:.env", "nl .env", "cp .env copy.txt"])
async def test_bypass_mode_does_not_let_a_command_naming_a_denied_file_print_it(project, command):
    # "A deny rule beats everything, bypass mode included": `cat .env` was denied in bypass
    # mode, but a command the path checks do not know by name only asked, and bypass
    # mode answers every plain ask with yes.
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "with the secret")
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="bypassPermissions", deny=READ_DENIES)
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text and not (project / "copy.txt").exists()
    denied_by_rule = "is blocked by the rule Read(.env)" in result.text  # the well-known readers (nl, cat)
    assert result.is_error and (refuser.asked or denied_by_rule), "the rule or a person (who says no here) must stop it"


@pytest.mark.parametrize("script", ["""1e cat .e""nv""", """s/.*/cat .e''nv/e""", "1r .env"])
async def test_a_sed_script_that_runs_or_reads_cannot_reach_a_denied_file(project, script):
    # sed's `e` command and `s///e` flag run a shell, and `r` reads a file the script names:
    # the shell's quote removal (.e""nv) or stdin hide the path from the words we check.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits", deny=READ_DENIES, allow=["Bash(sed:*)"])
    command = f"sed -n '{script}' README.md"
    result = await run_one(sched, "Bash", command=command)
    assert SECRET not in result.text
    assert result.is_error and refuser.asked


async def test_a_sed_that_only_edits_in_place_still_runs_under_accept_edits(project):
    # The check above must not make every `sed -i` ask: its script only edits the stream.
    refuser = Refuser()
    sched = scheduler(project, refuser, mode="acceptEdits", deny=READ_DENIES, allow=["Bash(sed:*)"])
    result = await run_one(sched, "Bash", command="sed -i 's/readme/README/' README.md")
    assert not result.is_error and not refuser.asked
    assert (project / "README.md").read_text() == "# README\n"
