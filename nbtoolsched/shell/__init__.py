"""Static analysis of shell commands: parsing, splitting and the read-only check.

A pure utility layer: it imports nothing else from nbtoolsched.
"""

from ._parse import (
    Assignment, Construct, ParsedCommand, Redirect, ShellParseError, SimpleCommand, Word,
    parse_command, split_command, strip_env_prefix, strip_wrappers, subcommand_strings,
    wrapper_prefix_len,
)
from ._gitrepo import Repository, RepositoryError, find_repository, repository_problem
from ._readonly import ReadOnlyVerdict, analyze, is_benign_exit, is_read_only

__all__ = [
    "ReadOnlyVerdict", "analyze", "is_benign_exit", "is_read_only",
    "Repository", "RepositoryError", "find_repository", "repository_problem",
    "Assignment", "Construct", "ParsedCommand", "Redirect", "ShellParseError",
    "SimpleCommand", "Word", "parse_command", "split_command", "strip_env_prefix",
    "strip_wrappers", "subcommand_strings", "wrapper_prefix_len",
]
