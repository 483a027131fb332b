"""The decision table: (rules, mode, hook, tool, input) -> allow / deny / ask.

"ask" means the approver was consulted. {P} is the project folder (the cwd), {O} a
folder outside it; the fixture makes link_out -> {O} and link_secret -> {P}/secrets.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from nbtoolsched.permissions._engine import Permissions
from nbtoolsched._tool._decision import Decision, DecisionReason

from .toolbox import TOOLS, bash, edit, fetch, outcome, read, write


@dataclass
class Case:
    id: str
    tool: str
    input: dict
    expect: str
    mode: str = "default"
    allow: tuple = ()
    deny: tuple = ()
    ask: tuple = ()
    hook: str | None = None
    by: str | None = None  # the DecisionReason kind expected for a non-ask outcome
    dirs: tuple = ()


CASES = [
    # shell prefix rules at a word boundary
    Case("prefix-allows", "Bash", bash("git log --oneline"), "allow", allow=("Bash(git log:*)",), by="rule"),
    Case("prefix-bare-command", "Bash", bash("git log"), "allow", allow=("Bash(git log:*)",), by="rule"),
    Case("prefix-word-boundary", "Bash", bash("git logx"), "ask", allow=("Bash(git log:*)",)),
    # lsof +m writes a mount supplement: not read-only, so only a rule could allow it (lsof -i is read-only)
    Case("prefix-ls-not-lsof", "Bash", bash("lsof +m"), "ask", allow=("Bash(ls:*)",)),
    Case("prefix-ls-leaves-readonly-lsof-to-the-tool", "Bash", bash("lsof -i"), "allow", allow=("Bash(ls:*)",), by="tool"),
    Case("prefix-through-xargs", "Bash", bash("xargs npm test"), "allow", allow=("Bash(npm test:*)",), by="rule"),
    Case("prefix-xargs-with-flags-no", "Bash", bash("xargs -0 npm test"), "ask", allow=("Bash(npm test:*)",)),
    Case("legacy-colon-star-wildcard", "Bash", bash("npm install left-pad"), "allow", allow=("Bash(npm *)",), by="rule"),
    Case("wildcard-trailing-covers-bare", "Bash", bash("npm"), "allow", allow=("Bash(npm *)",)),
    Case("wildcard-middle", "Bash", bash("docker run --rm alpine"), "allow", allow=("Bash(docker * alpine)",)),
    Case("exact-allows-exact", "Bash", bash("make build"), "allow", allow=("Bash(make build)",)),
    Case("exact-not-longer", "Bash", bash("make build-all"), "ask", allow=("Bash(make build)",)),
    # compound commands
    Case("compound-one-part-unallowed", "Bash", bash("npm test && npm publish"), "ask", allow=("Bash(npm test:*)",)),
    Case("compound-every-part-allowed", "Bash", bash("npm test && npm run lint"), "allow", allow=("Bash(npm test:*)", "Bash(npm run lint:*)")),
    Case("compound-rule-plus-readonly", "Bash", bash("npm test | grep ok"), "allow", allow=("Bash(npm test:*)",)),
    Case("compound-deny-any-part", "Bash", bash("ls && rm -rf build"), "deny", deny=("Bash(rm:*)",), allow=("Bash",), by="rule"),
    Case("compound-semicolon-deny", "Bash", bash("echo hi; rm x"), "deny", deny=("Bash(rm:*)",)),
    Case("compound-cd-and-git", "Bash", bash("cd src && git status"), "ask"),
    Case("substitution-unsplittable", "Bash", bash("echo $(whoami)"), "ask", allow=("Bash(echo:*)",)),
    Case("unparsable-still-denied", "Bash", bash('rm "unterminated'), "deny", deny=("Bash(rm:*)",)),
    # env vars and wrappers
    Case("deny-strips-any-env", "Bash", bash("FOO=1 rm x"), "deny", deny=("Bash(rm:*)",)),
    Case("deny-strips-wrapper", "Bash", bash("timeout 5 rm x"), "deny", deny=("Bash(rm:*)",)),
    Case("deny-strips-env-then-wrapper", "Bash", bash("A=1 nice -n 5 rm x"), "deny", deny=("Bash(rm:*)",)),
    Case("allow-keeps-unsafe-env", "Bash", bash("LD_PRELOAD=evil.so npm test"), "ask", allow=("Bash(npm test:*)",)),
    Case("allow-strips-safe-env", "Bash", bash("NODE_ENV=test npm test"), "allow", allow=("Bash(npm test:*)",)),
    Case("allow-strips-wrapper", "Bash", bash("timeout 30 npm test"), "allow", allow=("Bash(npm test:*)",)),
    # read-only shell and path constraints
    Case("readonly-shell-allowed", "Bash", bash("git status"), "allow", by="tool"),
    Case("readonly-cat-inside", "Bash", bash("cat src/a.py"), "allow"),
    Case("readonly-cat-outside", "Bash", bash("cat {O}/file.txt"), "ask"),
    Case("readonly-cat-denied-path", "Bash", bash("cat secrets/key.txt"), "deny", deny=("Read(./secrets/**)",)),
    Case("redirect-write-not-readonly", "Bash", bash("echo hi > notes.txt"), "ask"),
    Case("redirect-outside-even-allowed", "Bash", bash("echo hi > {O}/x"), "ask", allow=("Bash(echo:*)",)),
    Case("redirect-devnull-readonly", "Bash", bash("ls 2>/dev/null"), "allow"),
    # "> -", ">-" and "&>-" write a file named "-"; only ">&-" / ">& -" close a descriptor
    Case("redirect-to-dash-is-a-file", "Bash", bash("echo hi > -"), "ask", allow=("Bash(echo:*)",)),
    Case("redirect-to-dash-glued", "Bash", bash("echo hi >-"), "ask", allow=("Bash(echo:*)",)),
    Case("redirect-both-to-dash", "Bash", bash("echo hi &>-"), "ask", allow=("Bash(echo:*)",)),
    Case("redirect-close-fd", "Bash", bash("echo hi >&- 2>& -"), "allow", allow=("Bash(echo:*)",), by="rule"),
    Case("non-readonly-no-rule", "Bash", bash("npm install"), "ask"),
    Case("tool-wide-allow-bash", "Bash", bash("npm install"), "allow", allow=("Bash",), by="rule"),
    Case("content-ask-beats-tool-wide-allow", "Bash", bash("git push origin"), "ask", allow=("Bash",), ask=("Bash(git push:*)",)),
    # modes
    Case("bypass-allows", "Bash", bash("rm -rf build"), "allow", mode="bypassPermissions", by="mode"),
    Case("bypass-content-ask-still-asks", "Bash", bash("git push"), "ask", mode="bypassPermissions", ask=("Bash(git push:*)",)),
    Case("bypass-deny-rule-wins", "Bash", bash("rm -rf build"), "deny", mode="bypassPermissions", deny=("Bash(rm:*)",)),
    Case("bypass-safety-check-asks", "Edit", edit(".git/config"), "ask", mode="bypassPermissions"),
    Case("bypass-mcp", "mcp__github__create_issue", {}, "allow", mode="bypassPermissions"),
    Case("dontask-denies-ask", "Bash", bash("npm install"), "deny", mode="dontAsk", by="mode"),
    Case("dontask-keeps-allow-rule", "Bash", bash("npm install"), "allow", mode="dontAsk", allow=("Bash(npm install)",)),
    Case("dontask-content-ask-denied", "Bash", bash("git push"), "deny", mode="dontAsk", ask=("Bash(git push:*)",)),
    Case("plan-denies-write", "Write", write("src/new.py"), "deny", mode="plan", by="mode"),
    Case("plan-denies-shell-write", "Bash", bash("rm src/a.py"), "deny", mode="plan", allow=("Bash",)),
    Case("plan-allows-read", "Read", read("src/a.py"), "allow", mode="plan"),
    Case("plan-allows-readonly-shell", "Bash", bash("git log"), "allow", mode="plan"),
    Case("acceptedits-edit-inside", "Edit", edit("src/a.py"), "allow", mode="acceptEdits", by="mode"),
    Case("acceptedits-edit-outside", "Edit", edit("{O}/file.txt"), "ask", mode="acceptEdits"),
    Case("acceptedits-mkdir-inside", "Bash", bash("mkdir -p build/out"), "allow", mode="acceptEdits"),
    Case("acceptedits-mkdir-outside", "Bash", bash("mkdir {O}/x"), "ask", mode="acceptEdits"),
    Case("acceptedits-redirect-inside", "Bash", bash("echo hi > notes.txt"), "allow", mode="acceptEdits"),
    Case("acceptedits-edit-git-asks", "Edit", edit(".git/config"), "ask", mode="acceptEdits"),
    Case("acceptedits-edit-bashrc-asks", "Edit", edit(".bashrc"), "ask", mode="acceptEdits", allow=("Edit(./.bashrc)",)),
    Case("acceptedits-mv-flags-asks", "Bash", bash("mv -f a b"), "ask", mode="acceptEdits"),
    Case("default-edit-inside-asks", "Edit", edit("src/a.py"), "ask"),
    Case("auto-classifier-allows", "Bash", bash("npm install"), "allow", mode="auto", by="classifier"),
    Case("auto-classifier-denies", "Bash", bash("sudo apt-get install x"), "deny", mode="auto", by="classifier"),
    Case("auto-acceptedits-fast-path-shell", "Bash", bash("rm -rf build"), "allow", mode="auto", by="mode"),
    Case("auto-rm-outside-goes-to-classifier", "Bash", bash("rm -rf {O}"), "deny", mode="auto", by="classifier"),
    Case("auto-content-ask-prompts", "Bash", bash("git push"), "ask", mode="auto", ask=("Bash(git push:*)",)),
    Case("auto-edit-fast-path", "Edit", edit("src/a.py"), "allow", mode="auto", by="mode"),
    # file rules
    Case("read-inside", "Read", read("src/a.py"), "allow", by="tool"),
    Case("read-outside", "Read", read("{O}/file.txt"), "ask"),
    Case("read-outside-abs-rule", "Read", read("{O}/file.txt"), "allow", allow=("Read(/{O}/**)",), by="rule"),
    Case("read-outside-additional-dir", "Read", read("{O}/file.txt"), "allow", dirs=("{O}",)),
    Case("read-denied-dir", "Read", read("secrets/key.txt"), "deny", deny=("Read(./secrets/**)",), by="rule"),
    Case("read-denied-dotdot", "Read", read("src/../secrets/key.txt"), "deny", deny=("Read(./secrets/**)",)),
    Case("read-dotdot-leaves-project", "Read", read("src/../../outside/file.txt"), "ask"),
    Case("read-denied-via-symlink", "Read", read("link_secret/key.txt"), "deny", deny=("Read(./secrets/**)",)),
    Case("read-symlink-out-asks", "Read", read("link_out/file.txt"), "ask"),
    Case("read-unanchored-glob", "Read", read("src/deep/prod.env"), "deny", deny=("Read(*.env)",)),
    Case("read-deny-beats-bypass", "Read", read("secrets/key.txt"), "deny", mode="bypassPermissions", deny=("Read(./secrets/**)",)),
    Case("edit-rule-covers-read", "Read", read("{O}/file.txt"), "allow", allow=("Edit(/{O}/**)",)),
    Case("edit-allow-rule", "Edit", edit("src/a.py"), "allow", allow=("Edit(./src/**)",), by="rule"),
    Case("edit-allow-rule-dotdot-escape", "Edit", edit("src/../setup.py"), "ask", allow=("Edit(./src/**)",)),
    Case("edit-deny-beats-acceptedits", "Write", write("src/a.py"), "deny", mode="acceptEdits", deny=("Edit(./src/**)",)),
    Case("write-own-name-rule", "Write", write("src/a.py"), "allow", allow=("Write(./src/*.py)",)),
    Case("tool-wide-deny-read", "Read", read("src/a.py"), "deny", deny=("Read",), by="rule"),
    # hooks versus rules
    Case("hook-allow-skips-prompt", "Bash", bash("npm install"), "allow", hook="allow", by="hook"),
    Case("hook-allow-vs-deny-rule", "Bash", bash("rm x"), "deny", hook="allow", deny=("Bash(rm:*)",), by="rule"),
    Case("hook-allow-vs-content-ask", "Bash", bash("git push"), "ask", hook="allow", ask=("Bash(git push:*)",)),
    Case("hook-allow-vs-tool-wide-ask", "Deploy", {}, "ask", hook="allow", ask=("Deploy",)),
    Case("hook-allow-vs-safety-check", "Edit", edit(".git/config"), "ask", hook="allow"),
    Case("hook-allow-in-dontask", "Deploy", {}, "allow", hook="allow", mode="dontAsk"),
    Case("hook-allow-interactive-tool-asks", "AskUserQuestion", {}, "ask", hook="allow"),
    Case("hook-deny-beats-allow-rule", "Bash", bash("ls"), "deny", hook="deny", allow=("Bash",), by="hook"),
    Case("hook-deny-beats-bypass", "Deploy", {}, "deny", hook="deny", mode="bypassPermissions"),
    Case("hook-ask-beats-allow-rule", "Deploy", {}, "ask", hook="ask", allow=("Deploy",)),
    Case("hook-ask-loses-to-deny-rule", "Deploy", {}, "deny", hook="ask", deny=("Deploy",)),
    # MCP, WebFetch, generic tools
    Case("mcp-server-deny", "mcp__github__create_issue", {}, "deny", deny=("mcp__github",)),
    Case("mcp-server-star-allow", "mcp__github__create_issue", {}, "allow", allow=("mcp__github__*",)),
    Case("mcp-tool-allow", "mcp__github__create_issue", {}, "allow", allow=("mcp__github__create_issue",)),
    Case("mcp-other-server-untouched", "mcp__gitlab__create_issue", {}, "ask", allow=("mcp__github",)),
    Case("mcp-no-rule-asks", "mcp__github__create_issue", {}, "ask"),
    Case("webfetch-domain-allowed", "WebFetch", fetch("https://docs.python.org/3/"), "allow", allow=("WebFetch(domain:docs.python.org)",)),
    Case("webfetch-other-domain", "WebFetch", fetch("https://evil.example/"), "ask", allow=("WebFetch(domain:docs.python.org)",)),
    Case("webfetch-domain-denied", "WebFetch", fetch("https://evil.example/x"), "deny", deny=("WebFetch(domain:evil.example)",)),
    Case("generic-readonly-allowed", "Lookup", {}, "allow"),
    Case("generic-write-asks", "Deploy", {}, "ask"),
    Case("legacy-task-means-agent", "Agent", {}, "allow", allow=("Task",)),
    Case("own-check-deny-beats-bypass", "Guarded", {"target": "prod"}, "deny", mode="bypassPermissions", allow=("Guarded",)),
    Case("own-check-allow", "Guarded", {"target": "dev"}, "allow", by="tool"),
    Case("interactive-tool-asks-in-bypass", "AskUserQuestion", {}, "ask", mode="bypassPermissions"),
]


def _fill(value, proj, out):
    if isinstance(value, str):
        return value.replace("{P}", str(proj)).replace("{O}", str(out))
    if isinstance(value, dict):
        return {k: _fill(v, proj, out) for k, v in value.items()}
    return tuple(_fill(v, proj, out) for v in value)


_HOOKS = {
    "allow": Decision.allow(None, DecisionReason("hook", "test hook", source="PreToolUse:test")),
    "deny": Decision.deny("blocked by the test hook", DecisionReason("hook", "test hook", source="PreToolUse:test")),
    "ask": Decision.ask("the test hook wants a person", DecisionReason("hook", "test hook", source="PreToolUse:test")),
}


def test_table_is_big_enough():
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_decision(case: Case, project):
    proj, out = project
    perms = Permissions(
        case.mode,
        allow=_fill(case.allow, proj, out),
        deny=_fill(case.deny, proj, out),
        ask=_fill(case.ask, proj, out),
        additional_dirs=_fill(case.dirs, proj, out),
        cwd=proj,
        home=str(proj.parent),
    )
    got, decision = await outcome(perms, case.tool, _fill(case.input, proj, out), str(proj), _HOOKS.get(case.hook))
    explanation = perms.explain(TOOLS[case.tool], _fill(case.input, proj, out), hook_decision=_HOOKS.get(case.hook))
    assert got == case.expect, f"{decision}\n{explanation}"
    if case.by is not None:
        assert decision.reason is not None and decision.reason.kind == case.by, f"{decision}\n{explanation}"
