"""A public name says where users import it from, as httpx's names do.

Each public namespace (``nbtoolsched``, ``nbtoolsched.events``, ``.tools``, ``.models``,
``.speculation``, ``.internals``, ``.notebook``, ``.scale``, ``.sandbox``) ends with
``publish(__name__, __all__, globals())``: the ``__module__`` of every class and function
it exports becomes that namespace, so a traceback, ``help()`` and a repr show
``nbtoolsched.Scheduler`` rather than the private module that defines it, and pickle
finds a class where users find it. A name is exported from one namespace only
(tests/test_public_api.py checks both).
"""

from __future__ import annotations

import types
from typing import Iterable, Mapping

__all__ = ["publish"]


def publish(namespace: str, names: Iterable[str], values: Mapping[str, object]) -> None:
    """Give each exported class and function of the package the namespace's name as ``__module__``."""
    for name in names:
        value = values.get(name)  # a lazily loaded name is published when it loads
        if isinstance(value, (type, types.FunctionType)) and value.__module__.partition(".")[0] == "nbtoolsched":
            value.__module__ = namespace
