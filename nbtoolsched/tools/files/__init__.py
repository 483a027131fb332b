"""The file tools: Read, Write, Edit, Glob, Grep, NotebookEdit.

Read, Glob and Grep are read-only and run in parallel; Write, Edit and NotebookEdit
run alone and refuse files the model has not read (or that changed since it read them).
Glob and Grep use ripgrep when its binary is found and a pure-Python engine that gives
the same results otherwise (``GrepTool(engine="python")`` forces it).
"""

from ._edit import EditInput, EditTool
from ._glob import GlobInput, GlobTool
from ._grep import GrepInput, GrepTool
from ._notebook_edit import NotebookEditInput, NotebookEditTool
from ._read import ReadInput, ReadTool
from ._write import WriteInput, WriteTool

FILE_TOOLS = [ReadTool, WriteTool, EditTool, GlobTool, GrepTool, NotebookEditTool]

__all__ = [
    "FILE_TOOLS",
    "EditInput",
    "EditTool",
    "GlobInput",
    "GlobTool",
    "GrepInput",
    "GrepTool",
    "NotebookEditInput",
    "NotebookEditTool",
    "ReadInput",
    "ReadTool",
    "WriteInput",
    "WriteTool",
]
