"""Claude Code's own tools, as a replay needs them: which may run beside others, which
only read, and whether Claude Code asks before running them.

Transcripts name tools this package does not implement (TodoWrite, Agent, Skill, the task
and plan-mode tools...) and tools Claude Code has since renamed or dropped (Task, KillShell,
BashOutput, LS, MultiEdit, NotebookRead, SlashCommand...). A replay decides their calls as
Claude Code would: ``CLAUDE_TOOLS`` holds one row per tool, and ``claude_tool(name)`` gives
a stand-in ``Tool`` for the row that names it (by name or alias), judged by the real
permission engine and partitioned like any other tool. The registry's own tools (Bash,
Read, Write, Edit, Glob, Grep, NotebookEdit, WebFetch, ToolSearch, Sleep) are the real
implementations and come first; this table covers the rest.

``asks`` says what Claude Code's ``checkPermissions`` does with a call:

* ``never``: it allows every call (the ``buildTool`` default, reference §3.4), so only a
  tool-wide deny or ask rule stops it;
* ``rules``: it answers ask (or passthrough, which becomes ask): a person is asked unless
  an allow rule or the mode (bypassPermissions) lets the call through, and dontAsk denies;
* ``always``: the tool needs the person (``requiresUserInteraction``): its ask stands even
  under bypassPermissions or an allow rule (reference §4.4, step 1e);
* ``read`` / ``edit``: the file checks on the path in ``path_field`` (reference §4.5), as
  for Read and Edit (inside the working directories a read is allowed).

``content_field`` names the input field that content rules match (``Skill(review)``,
``SlashCommand(/deploy:*)``, ``Agent(Explore)``): exact, a ``name:*`` prefix, or a glob.

Where the facts come from (each row's comment names the file): the reference's own
sections give the defaults (§3.4: not concurrency-safe, not read-only, checkPermissions
allows), the aliases (§3.4) and the ask order (§4.4); per-tool facts were read in the
source it cites (§0: Claude Code 2.1.88, ``src/tools/...``), and for tools 2.1.88 no longer
has, in the bundles of Claude Code 2.0.59 and 1.0.33 (stored as
``claude_code_v_2.0.59/source/chunks.*.mjs`` and ``claude_code_v_1.0.33/.../improved-claude-code-5.mjs``
in the public repository mylinyuzhi/analysis_claude_code_v2).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..permissions._checks import decide
from .._tool._base import PermissionKind, Tool
from .._tool._context import ToolContext
from .._tool._decision import PASSTHROUGH, Decision, DecisionReason

__all__ = ["Asks", "ClaudeTool", "CLAUDE_TOOLS", "ClaudeCodeTool", "claude_tool"]

Asks = Literal["never", "rules", "always", "read", "edit"]


@dataclass(frozen=True, slots=True)
class ClaudeTool:
    """One of Claude Code's tools: the facts a replay decides and partitions its calls by."""

    name: str
    concurrency_safe: bool
    read_only: bool
    asks: Asks
    aliases: tuple[str, ...] = ()
    path_field: str | None = None  # read / edit: the input field with the path
    content_field: str | None = None  # the input field that content rules match
    reads_without: str | None = None  # a call without this field only reads, and is never asked (Config)


# One row per tool. CC = Claude Code; "default" = the buildTool default of reference §3.4.
CLAUDE_TOOLS: tuple[ClaudeTool, ...] = (
    # --- sub-agents, skills, commands ---------------------------------------------------------------
    ClaudeTool("Agent", True, True, "never", aliases=("Task",), content_field="subagent_type"),
    #   CC 2.1.88 src/tools/AgentTool/AgentTool.tsx: isConcurrencySafe and isReadOnly true, checkPermissions
    #   allow outside auto mode; alias Task (reference §3.4). CC 2.0.59 "Task": the same.
    ClaudeTool("Skill", False, False, "rules", content_field="skill"),
    #   CC 2.1.88 src/tools/SkillTool/SkillTool.ts: Skill(name) deny/allow rules, else ask (a skill of only
    #   "safe" properties is allowed, which a transcript does not show: counted as asked). Safety: default.
    ClaudeTool("SlashCommand", False, False, "rules", content_field="command"),
    #   CC 2.0.59 (chunks.130.mjs, SlashCommand): not concurrency-safe, not read-only; SlashCommand(cmd) deny/allow rules, else ask.
    # --- to-do lists and tasks ------------------------------------------------------------------------
    ClaudeTool("TodoWrite", False, False, "never"),
    #   CC 2.1.88 src/tools/TodoWriteTool/TodoWriteTool.ts: checkPermissions allow; safety and read-only: default (false).
    ClaudeTool("TodoRead", True, True, "never"),
    #   CC 1.0.33 (improved-claude-code-5.mjs, TodoRead): concurrency-safe, read-only, checkPermissions allow.
    ClaudeTool("TaskCreate", True, False, "never"),
    #   CC 2.1.88 src/tools/TaskCreateTool/TaskCreateTool.ts: isConcurrencySafe true; checkPermissions default.
    ClaudeTool("TaskGet", True, True, "never"),
    #   CC 2.1.88 src/tools/TaskGetTool/TaskGetTool.ts: concurrency-safe, read-only; checkPermissions default.
    ClaudeTool("TaskList", True, True, "never"),
    #   CC 2.1.88 src/tools/TaskListTool/TaskListTool.ts: concurrency-safe, read-only; checkPermissions default.
    ClaudeTool("TaskUpdate", True, False, "never"),
    #   CC 2.1.88 src/tools/TaskUpdateTool/TaskUpdateTool.ts: isConcurrencySafe true; checkPermissions default.
    # --- background shells and agents ---------------------------------------------------------------------
    ClaudeTool("TaskOutput", True, True, "never", aliases=("AgentOutputTool", "BashOutputTool")),
    #   CC 2.1.88 src/tools/TaskOutputTool/TaskOutputTool.tsx: read-only, so concurrency-safe; checkPermissions
    #   default; aliases from reference §3.4. CC 2.0.59 AgentOutputTool (chunks.139.mjs): the same.
    ClaudeTool("TaskStop", True, False, "never", aliases=("KillShell",)),
    #   CC 2.1.88 src/tools/TaskStopTool/TaskStopTool.ts: isConcurrencySafe true; checkPermissions default; alias
    #   KillShell (reference §3.4). CC 2.0.59 KillShell (chunks.145.mjs): safe, not read-only, allow.
    ClaudeTool("BashOutput", True, True, "never"),
    #   CC 2.0.59 (chunks.145.mjs, BashOutput): concurrency-safe, read-only, checkPermissions allow.
    # --- plan mode and questions -----------------------------------------------------------------------
    ClaudeTool("EnterPlanMode", True, True, "never"),
    #   CC 2.1.88 src/tools/EnterPlanModeTool/EnterPlanModeTool.ts: safe, read-only, no checkPermissions
    #   (default allow). CC 2.0.59 still asked "Enter plan mode?".
    ClaudeTool("ExitPlanMode", True, False, "always"),
    #   CC 2.1.88 src/tools/ExitPlanModeTool/ExitPlanModeV2Tool.ts: safe, not read-only (writes the plan),
    #   requiresUserInteraction and ask "Exit plan mode?" (outside agent teams).
    ClaudeTool("exit_plan_mode", True, True, "rules"),
    #   CC 1.0.33 (improved-claude-code-5.mjs, exit_plan_mode): safe, read-only, checkPermissions ask.
    ClaudeTool("AskUserQuestion", True, True, "always"),
    #   CC 2.1.88 src/tools/AskUserQuestionTool/AskUserQuestionTool.tsx: safe, read-only, requiresUserInteraction, ask.
    # --- the web ----------------------------------------------------------------------------------------------
    ClaudeTool("WebSearch", True, True, "rules"),
    #   CC 2.1.88 src/tools/WebSearchTool/WebSearchTool.ts: safe, read-only, checkPermissions passthrough (ask).
    # --- files, in tools older versions had -------------------------------------------------------------
    ClaudeTool("LS", True, True, "read", path_field="path"),
    #   CC 1.0.33 (improved-claude-code-5.mjs, LS): safe, read-only, the read permission check on its path.
    ClaudeTool("NotebookRead", True, True, "read", path_field="notebook_path"),
    #   CC 1.0.33 (improved-claude-code-5.mjs, NotebookRead): safe, read-only, the read check on notebook_path.
    ClaudeTool("MultiEdit", False, False, "edit", path_field="file_path"),
    #   CC 1.0.33 (improved-claude-code-5.mjs, MultiEdit): not safe, not read-only, Edit's permission check on file_path.
    ClaudeTool("LSP", True, True, "read", path_field="filePath"),
    #   CC 2.1.88 src/tools/LSPTool/LSPTool.ts: safe, read-only, checkReadPermissionForTool on filePath.
    # --- MCP resources --------------------------------------------------------------------------------------
    ClaudeTool("ListMcpResourcesTool", True, True, "never"),
    #   CC 2.1.88 src/tools/ListMcpResourcesTool/ListMcpResourcesTool.ts: safe, read-only, checkPermissions default.
    ClaudeTool("ReadMcpResourceTool", True, True, "never"),
    #   CC 2.1.88 src/tools/ReadMcpResourceTool/ReadMcpResourceTool.ts: safe, read-only, checkPermissions default.
    # --- settings, schedules, worktrees, teams, messages ----------------------------------------------------
    ClaudeTool("Config", True, False, "rules", reads_without="value"),
    #   CC 2.1.88 src/tools/ConfigTool/ConfigTool.ts: safe; read-only and allowed when no value is given, else ask.
    ClaudeTool("CronCreate", False, False, "never"),
    #   CC 2.1.88 src/tools/ScheduleCronTool/CronCreateTool.ts: no isConcurrencySafe, no checkPermissions (defaults).
    ClaudeTool("CronDelete", False, False, "never"),
    #   CC 2.1.88 src/tools/ScheduleCronTool/CronDeleteTool.ts: defaults.
    ClaudeTool("CronList", True, True, "never"),
    #   CC 2.1.88 src/tools/ScheduleCronTool/CronListTool.ts: safe, read-only, checkPermissions default.
    ClaudeTool("RemoteTrigger", True, False, "never"),
    #   CC 2.1.88 src/tools/RemoteTriggerTool/RemoteTriggerTool.ts: safe; read-only only for list/get (taken as
    #   not read-only); checkPermissions default.
    ClaudeTool("EnterWorktree", False, False, "never"),
    #   CC 2.1.88 src/tools/EnterWorktreeTool/EnterWorktreeTool.ts: defaults.
    ClaudeTool("ExitWorktree", False, False, "never"),
    #   CC 2.1.88 src/tools/ExitWorktreeTool/ExitWorktreeTool.ts: defaults.
    ClaudeTool("TeamCreate", False, False, "never"),
    #   CC 2.1.88 src/tools/TeamCreateTool/TeamCreateTool.ts: defaults.
    ClaudeTool("TeamDelete", False, False, "never"),
    #   CC 2.1.88 src/tools/TeamDeleteTool/TeamDeleteTool.ts: defaults.
    ClaudeTool("SendMessage", False, False, "never"),
    #   CC 2.1.88 src/tools/SendMessageTool/SendMessageTool.ts: not safe (default); checkPermissions allow (a
    #   message to a Remote Control bridge asks, behind a feature flag); read-only only for text (taken as not).
    ClaudeTool("SendUserMessage", True, True, "never", aliases=("Brief",)),
    #   CC 2.1.88 src/tools/BriefTool/BriefTool.ts: safe, read-only, checkPermissions default; alias Brief.
)

_BY_NAME: dict[str, ClaudeTool] = {n: row for row in CLAUDE_TOOLS for n in (row.name, *row.aliases)}
_STAND_INS: dict[str, "ClaudeCodeTool"] = {}


class _AnyInput(BaseModel):
    """Claude Code's schemas are not ours to enforce: any object is taken as it is."""

    model_config = ConfigDict(extra="allow")


def _fields(input: Any) -> dict[str, Any]:
    if isinstance(input, BaseModel):
        return dict(input.model_extra or {})
    return input if isinstance(input, dict) else {}


def _content_matches(pattern: str, content: str) -> bool:
    """Claude Code's content rules for skills and commands: exact, ``prefix:*``, and (ours) a glob."""
    pattern, content = pattern.removeprefix("/"), content.strip().removeprefix("/")
    if pattern == content:
        return True
    if pattern.endswith(":*"):
        return content.startswith(pattern[:-2])
    return "*" in pattern and fnmatch.fnmatchcase(content, pattern)


class ClaudeCodeTool(Tool[_AnyInput]):
    """A stand-in for one of Claude Code's tools: its row's facts, and its permission check."""

    input_model = _AnyInput

    def __init__(self, row: ClaudeTool) -> None:
        self.row = row
        self.name = row.name  # type: ignore[misc]
        self.aliases = row.aliases  # type: ignore[misc]
        kind: PermissionKind = "read" if row.asks == "read" else "edit" if row.asks == "edit" else "generic"
        self.permission_kind = kind  # type: ignore[misc]

    def _only_reads(self, input: Any) -> bool:
        return self.row.reads_without is not None and self.row.reads_without not in _fields(input)

    def is_concurrency_safe(self, input: Any) -> bool:
        return self.row.concurrency_safe

    def is_read_only(self, input: Any) -> bool:
        return self.row.read_only or self._only_reads(input)

    def requires_user_interaction(self) -> bool:
        return self.row.asks == "always"

    def get_path(self, input: Any) -> str | None:
        value = _fields(input).get(self.row.path_field) if self.row.path_field else None
        return value if isinstance(value, str) else None

    async def check_permissions(self, input: Any, ctx: ToolContext) -> Decision:
        row = self.row
        if row.asks in ("read", "edit"):
            return PASSTHROUGH  # the engine's file checks judge the path
        content = _fields(input).get(row.content_field) if row.content_field else None
        rules = getattr(ctx.permission_context, "rules", None)
        if isinstance(content, str) and rules is not None:
            for behavior in ("deny", "ask", "allow"):
                for rule in rules.content_rules(behavior, (row.name, *row.aliases)):
                    if _content_matches(rule.value.content or "", content):
                        return decide(rule, f"{row.name}({content.strip()})")
        if row.asks == "never" or self._only_reads(input):
            return Decision.allow(None, DecisionReason("tool", f"Claude Code's {row.name} never asks"))
        if row.asks == "always":
            return Decision.ask(f"Claude Code asks the person before every {row.name} call.",
                                DecisionReason("tool", f"{row.name} needs the person"))
        return Decision.ask(f"Claude Code asks before a {row.name} call that no rule allows.",
                            DecisionReason("tool", f"Claude Code asks for {row.name} unless a rule allows it"))


def claude_tool(name: str) -> ClaudeCodeTool | None:
    """The stand-in for the Claude Code tool called ``name`` (or an alias), None if it has no row."""
    row = _BY_NAME.get(name)
    if row is None:
        return None
    found = _STAND_INS.get(row.name)
    if found is None:
        found = _STAND_INS[row.name] = ClaudeCodeTool(row)
    return found
