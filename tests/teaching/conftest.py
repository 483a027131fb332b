"""The exercise checkers of the teaching notebooks (``notebooks/teaching/``), tested as code.

Each test fills a stub with a wrong answer and checks that its checker says what is wrong,
and with the right answer and checks that it passes.
"""

from __future__ import annotations

import sys
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
if str(NOTEBOOKS) not in sys.path:
    sys.path.insert(0, str(NOTEBOOKS))
