"""nbtoolsched as an Agent Client Protocol agent: ``python -m nbtoolsched acp``.

Editors and notebook hosts (Zed, Jupyter AI, marimo) start the agent as a process and
speak ACP with it over stdin and stdout; they draw the approval buttons, the tool calls'
progress and the diffs, and the agent schedules. Each session is an ``Agent`` on the
project's own Claude Code settings.

The pieces, one job each: ``_server`` answers the requests, ``_session`` is one session
(its agent, its prompt, its cancel), ``_updates`` turns a run's events into session
updates and ``_outbox`` sends them in order, ``_permission`` is the approver that asks
the client, ``_files`` is the client's file system for the file tools, ``_preview`` the
diff of a waiting edit, ``_replay`` a loaded conversation, ``_content`` a prompt's
blocks, ``_toolcalls`` how one call looks, ``_mcp`` the client's MCP servers, ``_script``
the JSON form of a scripted model, ``_stdio`` the stdio loop and ``_cli`` the command.

The shell and the client's terminals. Bash always runs in nbtoolsched's own OS sandbox
(bubblewrap), started by this process: the sandbox is built from the settings for that
one command, with file descriptors (its seccomp filter, a status pipe) handed to
bubblewrap and a process marker that lets every process the command started be found
and stopped. A client terminal (``terminal/create``) is a process the client starts: it
cannot receive those descriptors, and stopping it would be the client's to do. So the
command is not run in a client terminal; its output is shown as it arrives, in the tool
call's content, and a cancel stops it here. Nothing ever runs outside the sandbox it
would have run in, for the sake of a display.

The client's file system. When the client offers ``fs/read_text_file`` and
``fs/write_text_file``, Read shows the editor's text (unsaved buffers included) and
Write and Edit change it, through ``ToolContext.files``, the file tools' one seam for
this; all their checks (paths, permissions and approval, read-before-write) run first,
exactly as without a client.
"""
