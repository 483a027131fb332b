"""The places a program can be made to run from: tools' config folders and shells' startup files.

One list, used twice: the permission checks ask before anything changes a path here
(an Edit, a redirection, a shell command that writes), and the OS sandbox keeps every
such path read-only inside the folders a command may write, whatever the rules say.
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

__all__ = ["RISKY_DIRS", "RISKY_FILES", "XDG_RISKY", "GIT_RUN_PLACES", "risky_folder_at", "safety_concern"]

# Folders and files whose change can run code or rewrite configuration: an edit to them
# always asks, whatever the mode or the allow rules say.
RISKY_DIRS = frozenset({".git", ".vscode", ".idea", ".claude", ".husky"})
RISKY_FILES = frozenset(
    {".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zprofile",
     ".zshenv", ".zlogin", ".zlogout", ".profile", ".mcp.json", ".ripgreprc", ".envrc"}
)
XDG_RISKY = frozenset({"git", "fish"})  # ~/.config/git/config, ~/.config/fish/config.fish
# Inside a git directory, what git reads programs from. The rest of it (objects, refs,
# the index) must stay writable for commits; these never need to change for one.
GIT_RUN_PLACES = ("hooks", "config", "config.worktree", "info/attributes")


def risky_folder_at(parts: Sequence[str], index: int) -> bool:
    """Is ``parts[index]`` a folder whose files configure tools or can run code?"""
    return parts[index] in RISKY_DIRS or (index > 0 and parts[index - 1] == ".config" and parts[index] in XDG_RISKY)


def safety_concern(paths: Iterable[str]) -> str | None:
    """Why editing this path needs a person's eyes, or None."""
    for path in paths:
        parts = path.replace(os.sep, "/").split("/")
        for index, part in enumerate(parts[:-1]):
            if risky_folder_at(parts, index):
                return f"{path} is inside a {part} folder, whose files configure tools or can run code"
        if parts and (parts[-1] in RISKY_FILES or parts[-1] in RISKY_DIRS):
            return f"{path} is a configuration file that can change how tools or shells behave"
    return None
