"""The file tools: Read, Write, Edit, Glob, Grep, NotebookEdit.

Read, Glob and Grep are read-only and run in parallel; Write, Edit and NotebookEdit
run alone and refuse files the model has not read (or that changed since it read them).
Glob and Grep use ripgrep when its binary is found and a pure-Python engine that gives
the same results otherwise (``GrepTool(engine="python")`` forces it).
"""

from typing import Any

from ..._tool._base import Tool
from ._edit import EditTool
from ._glob import GlobTool
from ._grep import GrepTool
from ._notebook_edit import NotebookEditTool
from ._read import ReadTool
from ._write import WriteTool

FILE_TOOLS: tuple[type[Tool[Any]], ...] = (ReadTool, WriteTool, EditTool, GlobTool, GrepTool, NotebookEditTool)
