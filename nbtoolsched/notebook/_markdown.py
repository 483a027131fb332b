"""An assistant's text as HTML: Markdown rendered by mistune, with anything raw made harmless.

A model's text is untrusted: raw HTML in it is escaped (never rendered), and links with
a scheme that could run code (``javascript:``, ``data:``...) are replaced by mistune's
harmless placeholder. Text still streaming may hold an unclosed code fence or table;
it renders as far as it goes and settles when the rest arrives.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["markdown_html"]

_renderer: Any = None
_STYLE = "font-size:13px;line-height:1.45;overflow-wrap:anywhere"


def _render(text: str) -> str:
    global _renderer
    if _renderer is None:  # imported on first use: a notebook without %%agent never pays for it
        import mistune

        _renderer = mistune.create_markdown(escape=True, plugins=["strikethrough", "table", "url"])
    out = _renderer(text)
    return out if isinstance(out, str) else html.escape(text)


def markdown_html(text: str, *, muted: bool = False) -> str:
    """``text`` as a self-contained HTML fragment (``muted`` greys out a discarded answer)."""
    colour = "color:var(--jp-ui-font-color2, #6b7280);text-decoration:line-through;" if muted else ""
    return f'<div class="nts-md" style="{_STYLE};{colour}">{_render(text)}</div>'
