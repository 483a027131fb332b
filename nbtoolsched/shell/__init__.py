"""The shell layer: what a command line is, stated once, as facts.

tree-sitter-bash parses the line; ``line_facts`` turns it into one typed record (the
invocations with their runners peeled, each read through the program table, the parts
the line splits into, the places it may work in, what it reads, writes and names, the
code nested in it, the words the shell computes, and whether it is read-only and why).
Every rule and check of the permissions layer, the sandbox's ``excludedCommands`` and
the speculation gate read these facts; nothing outside this package parses a command.

A pure layer: it imports nothing else from nbtoolsched but the errors. The names below
are its whole interface (tests/test_import_graph.py holds every other layer to them).
"""

from ._candidates import allow_candidates, deny_candidates, first_word, rule_prefix, shell_words
from ._config_places import GIT_RUN_PLACES, RISKY_DIRS, RISKY_FILES, XDG_RISKY, safety_concern
from ._gitrepo import MAX_INDEX_BYTES, RepositoryError, find_repository
from ._invocations import CommandLine, Invocation, command_line
from ._model import ParsedCommand, ShellParseError
from ._network import network_use
from ._parse import MAX_COMMAND_CHARS, parse_command, subcommand_strings
from ._paths import MAX_LINK_WALK, inside_working_dirs, is_inside, links_under, paths_for_check, shell_paths_for_check
from ._programs import PROGRAMS, Program, program
from ._readonly import ReadOnlyVerdict, analyze, is_benign_exit
from ._reads import ReadTargets, line_names, read_targets, shows_repository_content
from ._places import relative_bases
from ._writes import config_write, written_words

__all__ = [
    "GIT_RUN_PLACES", "MAX_COMMAND_CHARS", "MAX_INDEX_BYTES", "MAX_LINK_WALK", "PROGRAMS", "RISKY_DIRS", "RISKY_FILES",
    "XDG_RISKY", "CommandLine", "Invocation", "ParsedCommand", "Program", "ReadOnlyVerdict", "ReadTargets",
    "RepositoryError", "ShellParseError", "allow_candidates", "analyze", "command_line", "config_write",
    "deny_candidates", "find_repository", "first_word", "inside_working_dirs", "is_benign_exit", "is_inside",
    "line_names", "links_under", "network_use", "parse_command", "paths_for_check", "program", "read_targets",
    "relative_bases", "rule_prefix", "safety_concern", "shell_paths_for_check", "shell_words", "shows_repository_content",
    "subcommand_strings", "written_words",
]
