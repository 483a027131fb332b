"""The shell layer: what a command line is, stated once, as facts.

tree-sitter-bash parses the line; ``line_facts`` turns it into one typed record (the
programs it runs with their runners peeled, the parts it splits into, each read through
the program table, the places it may work in, what it reads, changes and names, the code
nested in it, the words the shell computes, whether it is read-only and why). Every rule
and check of the permissions layer, the sandbox's ``excludedCommands``, the Bash tool and
the speculation gate read these facts; nothing outside this package parses a command.

A pure layer: it imports nothing else from nbtoolsched but the errors. The names below
are its whole interface; tests/test_import_graph.py holds every other layer to them.
"""

from ._config_places import GIT_RUN_PLACES, RISKY_DIRS, RISKY_FILES, XDG_RISKY, safety_concern
from ._facts import MAX_PARTS, LineFacts, PartFacts, Redirection, Splitter, default_split, line_facts
from ._gitrepo import MAX_INDEX_BYTES, find_repository
from ._lexical import lexical_paths
from ._model import ParsedCommand, ShellParseError
from ._parse import MAX_COMMAND_CHARS, parse_command
from ._paths import MAX_LINK_WALK, inside_working_dirs, is_inside, links_under, paths_for_check, shell_paths_for_check
from ._programs import PROGRAMS, Program, program
from ._readonly import ReadOnlyVerdict, analyze, is_benign_exit
from ._reads import ReadTargets

__all__ = [
    # the facts record of one command line
    "line_facts", "LineFacts", "PartFacts", "Redirection", "ReadTargets", "Splitter", "default_split", "MAX_PARTS",
    "MAX_COMMAND_CHARS",
    # the read-only verdict (what runs in parallel, what runs unasked)
    "analyze", "ReadOnlyVerdict", "is_benign_exit",
    # the program table
    "PROGRAMS", "Program", "program",
    # places: where paths lead, the places that configure tools, the repository git uses
    "paths_for_check", "shell_paths_for_check", "links_under", "is_inside", "inside_working_dirs", "MAX_LINK_WALK",
    "safety_concern", "RISKY_DIRS", "RISKY_FILES", "GIT_RUN_PLACES", "XDG_RISKY", "find_repository", "MAX_INDEX_BYTES",
    # judging paths as written (a transcript replay), not through this machine's file system
    "lexical_paths",
    # the parse itself, for the notebooks that take it apart
    "parse_command", "ParsedCommand", "ShellParseError",
]
