"""How big the public surface is, and how much of it is typed ``Any``.

Counted, for one checkout of the package:

* the top level: the names in ``nbtoolsched.__all__``, and the public names ``dir()``
  shows (submodules among them, counted apart);
* each public namespace (``nbtoolsched.events``, ``.tools``, ``.models``,
  ``.speculation``, ``.internals``, ``.notebook``, ``.scale``, ``.sandbox``, where the
  checkout has it): the names in its ``__all__``;
* names exported more than once (one class or function in two ``__all__`` lists), and
  exported classes and functions whose ``__module__`` is not the namespace that exports
  them (what a traceback, ``help()`` or a repr shows users);
* ``Any`` in the annotations of public signatures: every exported function, and for every
  exported class its constructor (as ``inspect.signature(cls)`` shows it: a dataclass's or
  a pydantic model's fields included) and its public methods and properties, inherited ones
  from the package included. Each function is counted once, however many names reach it.
  Apart: how many of them are the value type of a JSON object (``dict[str, Any]``,
  ``Mapping[str, Any]``).

    python benchmarks/measure_surface.py [--root PATH] [--list]

``--root`` is the root of a checkout (the folder holding ``nbtoolsched/``), by default the
one this script lives in; ``--list`` prints each signature that mentions ``Any``.
tests/test_public_api.py uses the same functions for its checks.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

HERE = Path(__file__).resolve().parent
NAMESPACES = ("nbtoolsched", "nbtoolsched.events", "nbtoolsched.tools", "nbtoolsched.models",
              "nbtoolsched.speculation", "nbtoolsched.internals", "nbtoolsched.notebook",
              "nbtoolsched.scale", "nbtoolsched.sandbox")
ANY = re.compile(r"\bAny\b")
JSON_OBJECT = re.compile(r"\b(?:dict|Mapping)\[str, (?:typing\.)?Any\]")


def namespaces() -> dict[str, types.ModuleType]:
    """The public namespaces the imported checkout has, imported."""
    import nbtoolsched

    package = Path(nbtoolsched.__file__).resolve().parent
    found = {}
    for name in NAMESPACES:
        parts = name.split(".")[1:]
        if parts and not any((package.joinpath(*parts[:-1]) / f).exists() for f in (f"{parts[-1]}.py", f"{parts[-1]}/__init__.py")):
            continue  # not in this checkout (an editable install's finder might still find another one's)
        found[name] = importlib.import_module(name)
    return found


def exports() -> Iterator[tuple[str, str, object]]:
    """(namespace, name, value) for every name in a public namespace's ``__all__``."""
    for namespace, module in namespaces().items():
        for name in getattr(module, "__all__", ()):
            yield namespace, name, getattr(module, name)


def annotation_text(annotation: object) -> str:
    if annotation is inspect.Parameter.empty or annotation is inspect.Signature.empty:
        return ""
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def any_count(sig: inspect.Signature, *, json_objects: bool = True) -> int:
    """``Any`` in a signature's annotations (without the JSON objects' ones if asked)."""
    texts = [annotation_text(p.annotation) for p in sig.parameters.values()]
    texts.append(annotation_text(sig.return_annotation))
    if not json_objects:
        texts = [JSON_OBJECT.sub("J", t) for t in texts]
    return sum(len(ANY.findall(t)) for t in texts)


def _ours(cls: type) -> bool:
    """A class of the package (its ``__module__`` may have been set to a public namespace)."""
    return cls.__module__.split(".")[0] == "nbtoolsched"


def _callables_of(cls: type) -> list[tuple[str, Callable[..., object]]]:
    """Public methods and property getters of ``cls``, inherited ones from the package included."""
    found: dict[str, Callable[..., object]] = {}
    for klass in reversed(cls.__mro__):
        if not _ours(klass):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") and name != "__call__":
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, property):
                member = member.fget
            if isinstance(member, types.FunctionType):
                found[name] = member
            elif name in found:  # overridden by something that is not a function (a field, a constant)
                del found[name]
    return sorted(found.items())


def signatures() -> Iterator[tuple[str, inspect.Signature]]:
    """(label, signature) of every public callable, each function once."""
    seen: set[int] = set()
    for namespace, name, value in exports():
        label = f"{namespace}.{name}"
        targets: list[tuple[str, Callable[..., object]]] = []
        if isinstance(value, types.FunctionType):
            targets.append((label, value))
        elif isinstance(value, type) and _ours(value):
            targets.append((label, value))
            targets += [(f"{label}.{attr}", fn) for attr, fn in _callables_of(value)]
        for what, target in targets:
            if id(target) in seen:
                continue
            seen.add(id(target))
            try:
                yield what, inspect.signature(target)
            except (TypeError, ValueError):
                continue


@dataclass
class Surface:
    top_all: int = 0
    top_dir: int = 0
    top_dir_modules: int = 0
    names: dict[str, int] = field(default_factory=dict)  # namespace -> len(__all__)
    exported_twice: list[str] = field(default_factory=list)
    module_elsewhere: list[str] = field(default_factory=list)
    any_total: int = 0
    any_outside_json: int = 0
    signatures: int = 0
    any_signatures: list[tuple[str, int, str]] = field(default_factory=list)  # (where, count, signature)


def measure(root: Path) -> Surface:
    sys.path.insert(0, str(root))
    import nbtoolsched

    where = Path(nbtoolsched.__file__).resolve()
    if root.resolve() not in where.parents:
        raise SystemExit(f"imported nbtoolsched from {where}, not from {root}")

    surface = Surface()
    surface.top_all = len(nbtoolsched.__all__)
    public = [n for n in dir(nbtoolsched) if not n.startswith("_")]
    surface.top_dir = len(public)
    surface.top_dir_modules = sum(isinstance(getattr(nbtoolsched, n), types.ModuleType) for n in public)
    surface.names = {name: len(getattr(module, "__all__", ())) for name, module in namespaces().items()}
    first_seen: dict[int, str] = {}
    for namespace, name, value in exports():
        if not isinstance(value, (type, types.FunctionType)):
            continue
        label = f"{namespace}.{name}"
        if id(value) in first_seen:
            surface.exported_twice.append(f"{label} (also {first_seen[id(value)]})")
        first_seen.setdefault(id(value), label)
        if value.__module__ != namespace:
            surface.module_elsewhere.append(f"{label} says {value.__module__}")
    for what, sig in signatures():
        surface.signatures += 1
        count = any_count(sig)
        if count:
            surface.any_total += count
            surface.any_outside_json += any_count(sig, json_objects=False)
            surface.any_signatures.append((what, count, str(sig)))
    return surface


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE.parent, help="a checkout's root (default: this one)")
    parser.add_argument("--list", action="store_true", help="print each signature that mentions Any")
    args = parser.parse_args()
    s = measure(args.root)
    print(f"nbtoolsched at {args.root.resolve()}")
    print(f"top level: {s.top_all} names in __all__; {s.top_dir} public names in dir() "
          f"({s.top_dir_modules} of them submodules, {s.top_dir - s.top_dir_modules} other)")
    print("names in __all__ of each public namespace:")
    for namespace, count in s.names.items():
        print(f"  {namespace:<26} {count:4}")
    print(f"  {'subpackages together':<26} {sum(c for n, c in s.names.items() if n != 'nbtoolsched'):4}")
    print(f"exported more than once: {len(s.exported_twice)}")
    for line in s.exported_twice:
        print(f"  {line}")
    print(f"__module__ not where the name is exported: {len(s.module_elsewhere)}")
    print(f"Any in public signatures: {s.any_total} occurrences, in {len(s.any_signatures)} of {s.signatures} signatures; "
          f"{s.any_total - s.any_outside_json} of them the values of JSON objects, {s.any_outside_json} elsewhere")
    if args.list:
        for what, count, sig in s.any_signatures:
            print(f"  {count}  {what}{sig}")


if __name__ == "__main__":
    main()
