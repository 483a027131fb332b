"""Every permission ask as ``session/request_permission``: the client draws the buttons.

The options are those of the notebook's approval row: Allow once; Always allow, which
saves the rules the permissions suggest for the call (all of them, as the notebook does)
into the project's .claude/settings.local.json, as Claude Code's "don't ask again"
does (offered only when a rule names the call); and Reject, which stops the turn for the
person to say how to go on. A request the client answers ``cancelled`` (it does so for
every pending request when it cancels the prompt) is a rejection too; when the prompt
is cancelled our side stops waiting at once anyway (the abort cancels the waiting call).

While it waits, the call shows as pending with what it would do: an edit's diff
(``preview``), the reason it asks, and the rule "Always allow" would save.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from acp.helpers import text_block, tool_content
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from ..permissions._approvals import LOCAL_SETTINGS, ApprovalAnswer, ApprovalRequest
from ._outbox import Outbox
from ._toolcalls import kind_of, locations_of, title_of

if TYPE_CHECKING:
    from acp.interfaces import Client

__all__ = ["ClientApprover", "ALLOW_ONCE", "ALLOW_ALWAYS", "REJECT"]

log = logging.getLogger(__name__)

ALLOW_ONCE = PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")
ALLOW_ALWAYS = PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always")
REJECT = PermissionOption(option_id="reject_once", name="Reject", kind="reject_once")

Preview = Callable[[ApprovalRequest], Awaitable[list[Any]]]  # what a waiting call would do, as ACP content


class ClientApprover:
    """The session's approver (``Approver``): asks the client, maps its answer."""

    def __init__(self, client: Client, session_id: str, outbox: Outbox, cwd: str, preview: Preview) -> None:
        self.client = client
        self.session_id = session_id
        self.outbox = outbox
        self.cwd = cwd
        self.preview = preview

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        rules = request.suggested_rules  # saved together, as the notebook's Always allow saves them
        rule = ", ".join(rules) if rules else None
        options = [ALLOW_ONCE, ALLOW_ALWAYS, REJECT] if rule is not None else [ALLOW_ONCE, REJECT]
        content = [*await self.preview(request), tool_content(text_block(_explanation(request.reason, rule)))]
        tool_call = ToolCallUpdate(
            tool_call_id=request.tool_use_id, title=title_of(request.tool_name, request.input, self.cwd),
            kind=kind_of(request.tool_name), status="pending", raw_input=request.input, content=content,
            locations=locations_of(request.tool_name, request.input, self.cwd),
        )
        await self.outbox.flush()  # the client knows the call before it is asked about it
        try:
            response = await self.client.request_permission(session_id=self.session_id, tool_call=tool_call, options=options)
        except Exception as err:  # noqa: BLE001 - no answer is a rejection (fail closed)
            log.warning("session %s: the permission request for %s failed: %s", self.session_id, request.tool_use_id, err)
            return ApprovalAnswer.deny()
        outcome = response.outcome
        chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else None
        if chosen == ALLOW_ONCE.option_id:
            return ApprovalAnswer.allow()
        if chosen == ALLOW_ALWAYS.option_id and rule is not None:
            return ApprovalAnswer.allow_always(rules, destination="localSettings")
        if chosen not in (None, REJECT.option_id):
            log.warning("session %s: unknown permission option %r taken as a rejection", self.session_id, chosen)
        return ApprovalAnswer.deny()  # rejected, cancelled, or an option we never offered


def _explanation(reason: str, rule: str | None) -> str:
    saves = f"\n\nAlways allow saves {rule} to {LOCAL_SETTINGS}." if rule is not None else ""
    return f"{reason}{saves}"
