"""Text files as the edit tools see them: decoded, with their line endings remembered.

An edit reads a CRLF file with LF endings (what Read showed the model) and writes it
back with CRLF; a UTF-8 BOM or UTF-16 survives the round trip too.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from ..._files import atomic_write

__all__ = ["TextFile", "load_text", "save_text", "decode_bytes", "text_file", "sniff_encoding"]

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


@dataclass(frozen=True, slots=True)
class TextFile:
    text: str  # with "\n" line endings when the file used CRLF throughout
    encoding: str = "utf-8"
    crlf: bool = False

    def render(self, text: str) -> str:
        """``text`` with this file's line endings (what an editor given text, not bytes, gets)."""
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return text

    def encode(self, text: str) -> bytes:
        return self.render(text).encode(self.encoding)


def decode_bytes(data: bytes) -> tuple[str, str]:
    """(text, encoding): a BOM decides; otherwise UTF-8, with bad bytes replaced."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, "replace"), encoding
    return data.decode("utf-8", "replace"), "utf-8"


def load_text(path: str) -> TextFile:
    with open(path, "rb") as handle:
        text, encoding = decode_bytes(handle.read())
    return text_file(text, encoding)


def text_file(text: str, encoding: str = "utf-8") -> TextFile:
    """Decoded text as a TextFile: CRLF throughout is remembered and shown as LF."""
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    return TextFile(text.replace("\r\n", "\n") if crlf else text, encoding, crlf)


def sniff_encoding(path: str) -> str:
    """The encoding ``load_text`` would find for ``path`` (its BOM decides), from its first bytes."""
    with open(path, "rb") as handle:
        return decode_bytes(handle.read(4))[1]


def save_text(path: str, text: str, like: TextFile | None = None) -> None:
    """Atomically write ``text`` in the encoding and line endings of ``like``."""
    atomic_write(path, (like or TextFile("")).encode(text))
