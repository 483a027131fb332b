"""Markers by where a test lives, so the core can run alone in well under a minute.

``python -m pytest`` (the README's command) runs everything. ``-m "not slow"`` skips the
parts that start real kernels, a browser, MCP servers or the teaching notebooks; each
of those also has its own marker (``-m kernel``, ``-m browser``, ``-m mcp``,
``-m notebooks``), as do the few core tests that take seconds by design (``-m heavy``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
SLOW_PARTS = {
    "kernel": ROOT / "tests" / "notebook" / "test_kernel.py",
    "browser": ROOT / "tests" / "browser",
    "mcp": ROOT / "tests" / "tools" / "mcp",
    "notebooks": ROOT / "notebooks",
}


# Tests that take seconds by design: they run mypy, feed hostile inputs large enough to show
# linear time, or compare with real bash and git over a whole corpus. Marked ``heavy``.
HEAVY = (
    "tests/test_public_api.py::test_mypy_passes_on_the_package",
    "tests/test_public_api.py::test_a_decorated_function_and_a_typed_tool_keep_their_types",
    "tests/tools/test_html_text.py::test_hostile_pages_convert_in_linear_time",
    "tests/notebook/test_cellparse_prescan.py::test_hostile_bodies_are_read_in_linear_time",
    "tests/tools/files/test_files_grep_bounds.py",
    "tests/shell/test_git_flags.py",
    "tests/shell/test_properties.py",
    "tests/attacks/test_process_cleanup.py",
    "tests/tools/test_bash_processes_bounds.py",
    # Each waits a second or more by design (a grace period, a timeout, a subprocess
    # that imports the package, a bash differential): whole-suite runs only.
    "tests/tools/test_bash.py::test_what_a_command_leaves_running_is_stopped_and_named",
    "tests/tools/test_bash.py::test_what_could_not_be_stopped_is_said",
    "tests/tools/test_bash.py::test_without_proc_the_group_is_still_stopped",
    "tests/tools/test_bash.py::test_a_timeout_stops_what_left_the_group",
    "tests/tools/test_bash.py::test_interrupt_stops_sleep_but_not_a_blocking_bash",
    "tests/tools/test_sleep.py::test_sleep_reports_each_second_then_finishes",
    "tests/tools/test_webfetch.py::test_slow_response_times_out",
    "tests/shell/test_heredoc.py::test_bash_runs_nothing_the_analysis_did_not_find",
    "tests/shell/test_parse.py::test_code_points_that_crash_tree_sitter_bash_are_harmless",
    "tests/agent/test_session_log.py::test_a_hook_reading_transcript_path_with_jq_finds_the_current_tool_use",
    "tests/scale/test_report.py::test_replay_magic_in_ipython",
    "tests/scale/test_engines.py::test_one_process_and_two_give_the_same_replays",
    "tests/attacks/test_cellparse.py::test_escaped_quotes_make_the_json_depth_scan_quadratic",
    "tests/attacks/test_readonly_side_effects.py::test_git_status_copies_an_index_that_is_a_symlink_to_dev_zero",
    "tests/attacks/test_grep_bounds.py::test_grep_content_mode_memory_does_not_scale_with_the_matches",
    "tests/test_public_api.py::test_the_core_imports_without_jupyter_or_the_anthropic_sdk",
    "tests/test_run_sync.py::test_run_sync_inside_a_running_loop_applies_nest_asyncio2_only_then",
    "tests/permissions/test_hooks.py::test_timeout_is_a_notice_and_blocks_under_strict_hooks",
    "tests/notebook/test_pump.py::test_many_marks_coalesce_into_few_renders",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path)).resolve()
        for marker, where in SLOW_PARTS.items():
            if path == where or where in path.parents:
                item.add_marker(getattr(pytest.mark, marker))
                item.add_marker(pytest.mark.slow)
        if item.nodeid.startswith(HEAVY):
            item.add_marker(pytest.mark.heavy)
            item.add_marker(pytest.mark.slow)
