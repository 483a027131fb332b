"""Chapter 15's helpers and checker: overlayfs's layers, made on disk, looked up, drawn.

* ``random_layers``: a seeded random pair of layers on disk (lower, and an upper folder with
  files, folders, whiteouts and opaque folders, made with ``teaching.make_whiteout`` and
  ``make_opaque``), laid out as ``KernelOverlay`` wants them (``<root>/overlay/upper``),
  so the library can mount them.
* ``reference_lookup``: what the merged view shows for a path (the upper entry, the lower
  one, or nothing), the rule ``check_lookup`` compares the learner's lookup with. The tests
  check it against a real overlayfs mount of the same layers (``merged_view``) and against
  ``KernelOverlay.lookup``.
* ``layers_picture``: ``teaching.layers_diagram`` for real folders: what each layer holds
  at some paths and what the merged view shows there.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from . import Picture, is_opaque, is_whiteout, layers_diagram, make_opaque, make_whiteout, scratch_project
from .checks import Verdict, run_check

__all__ = ["Layers", "random_layers", "reference_lookup", "explain_lookup", "check_lookup", "describe_layers",
           "merged_view", "layers_picture", "label_of", "SEED", "CASES"]

SEED = 15
CASES = 40
NAMES = ["a", "b", "docs", "src", "notes", "old"]


@dataclass
class Layers:
    """Two layers on disk: ``lower`` (the real folder) and ``upper``, and what was put in each."""

    root: Path
    lower: str
    upper: str
    workdir: str  # KernelOverlay(lower, workdir) mounts these layers (its upper: workdir/upper)
    lower_kinds: dict[str, str] = field(default_factory=dict)  # rel -> "file" | "folder"
    upper_kinds: dict[str, str] = field(default_factory=dict)  # rel -> "file" | "folder" | "opaque" | "whiteout"

    def asked(self) -> list[str]:
        """The paths a check asks about: every path of either layer, and one under each."""
        paths = set(self.lower_kinds) | set(self.upper_kinds)
        paths |= {os.path.join(p, "new.txt") for p in list(paths) if len(p.split(os.sep)) < 3}
        return sorted(paths)


def _random_tree(rng: random.Random, depth: int = 0, prefix: str = "") -> dict[str, str]:
    """{rel: "file" | "folder"}: a small random tree, parents before children."""
    tree: dict[str, str] = {}
    for name in rng.sample(NAMES, rng.randint(1 if depth == 0 else 0, 4 if depth == 0 else 2)):
        rel = os.path.join(prefix, name)
        if depth < 2 and rng.random() < 0.5:
            tree[rel] = "folder"
            tree.update(_random_tree(rng, depth + 1, rel))
        else:
            tree[rel] = "file"
    return tree


def _random_upper(rng: random.Random, lower: dict[str, str], depth: int = 0, prefix: str = "") -> dict[str, str]:
    """What a run could leave in the upper folder over ``lower``: copied-up or new files, folders
    (merged with lower's, or opaque), and whiteouts of lower's entries."""
    upper: dict[str, str] = {}
    here = sorted({rel.split(os.sep)[depth] for rel in lower if rel.startswith(prefix) and len(rel.split(os.sep)) > depth})
    names = set(rng.sample(here, min(len(here), rng.randint(0, 3))))
    names |= set(rng.sample(NAMES, rng.randint(0, 2 if depth == 0 else 1)))
    for name in sorted(names):
        rel = os.path.join(prefix, name)
        below = lower.get(rel)
        roll = rng.random()
        if below is not None and roll < 0.3:
            upper[rel] = "whiteout"
        elif depth < 2 and roll < 0.75:
            upper[rel] = "opaque" if below == "folder" and rng.random() < 0.4 else "folder"
            upper.update(_random_upper(rng, lower if below == "folder" and upper[rel] == "folder" else {}, depth + 1, rel))
            if upper[rel] == "opaque":  # a folder made again: what is in it now is new
                upper.update({k: v for k, v in _random_tree(rng, depth + 1, rel).items() if k not in upper})
        else:
            upper[rel] = "file"
    return upper


def random_layers(rng: random.Random, base: Path | None = None) -> Layers:
    """A random lower tree and an upper folder over it, made on disk under ``base``."""
    root = Path(base if base is not None else scratch_project())
    root.mkdir(parents=True, exist_ok=True)
    lower, workdir = root / "lower", root / "overlay"
    upper = workdir / "upper"
    lower.mkdir()
    upper.mkdir(parents=True)
    lower_kinds = _random_tree(rng)
    upper_kinds = _random_upper(rng, lower_kinds)
    for rel, kind in lower_kinds.items():
        if kind == "folder":
            (lower / rel).mkdir()
        else:
            (lower / rel).write_text(f"lower {rel}\n")
    for rel, kind in upper_kinds.items():
        if kind in ("folder", "opaque"):
            (upper / rel).mkdir()
            if kind == "opaque":
                make_opaque(upper / rel)
        elif kind == "whiteout":
            make_whiteout(upper / rel)
        else:
            (upper / rel).write_text(f"upper {rel}\n")
    return Layers(root, str(lower), str(upper), str(workdir), lower_kinds, upper_kinds)


# -- the rule ---------------------------------------------------------------------------------
def explain_lookup(upper: str, lower: str, rel: str) -> tuple[str | None, str]:
    """The merged view's answer for the link-free ``rel`` and why: the upper or lower path
    (None: not there), walked one name at a time as overlayfs does."""
    up, low = upper, lower
    names = rel.split(os.sep)
    for i, name in enumerate(names):
        up, low = os.path.join(up, name), (os.path.join(low, name) if low is not None else None)
        last = i == len(names) - 1
        shown = os.path.join(*names[:i + 1])
        if is_whiteout(up):
            return None, f"{shown} is a whiteout in upper (deleted)"
        if os.path.lexists(up):
            if last:
                return up, "upper has it (the upper entry wins)"
            if not os.path.isdir(up) or os.path.islink(up):
                return None, f"{shown} is a file in upper, and a file has no entries"
            if low is not None and is_opaque(up):
                low = None
                hidden = f"{shown} is an opaque folder in upper, so lower's entries under it are hidden"
            continue
        if low is None:
            return None, hidden
        if not os.path.lexists(low):
            return None, f"neither layer has {shown}"
        if last:
            return low, "only lower has it"
        if not os.path.isdir(low) or os.path.islink(low):
            return None, f"{shown} is a file in lower, and a file has no entries"
    return None, "not there"


def reference_lookup(upper: str, lower: str, rel: str) -> str | None:
    """Where the merged view has ``rel``: its upper path, its lower path, or None."""
    return explain_lookup(upper, lower, rel)[0]


def describe_layers(layers: Layers) -> str:
    """One line: what each layer holds."""
    def listing(kinds: dict[str, str]) -> str:
        marks = {"folder": "/", "opaque": "/ (opaque)", "whiteout": " (whiteout)", "file": ""}
        return ", ".join(rel + marks[kind] for rel, kind in sorted(kinds.items())) or "(empty)"
    return f"upper: {listing(layers.upper_kinds)}; lower: {listing(layers.lower_kinds)}"


def _short(path: str | None, layers: Layers) -> str:
    return "nothing (None)" if path is None else os.path.relpath(path, layers.root).replace(f"overlay{os.sep}", "")


def check_lookup(fn: Callable[[str, str, str], str | None], cases: int = CASES, seed: int = SEED) -> Verdict:
    """Compare ``fn(upper, lower, rel)`` with the rule on every path of ``cases`` seeded random layers."""
    rng = random.Random(seed)
    base = scratch_project()
    trees = [random_layers(rng, base / f"case{n:02d}") for n in range(cases)]

    def problems(layers: Layers) -> list[str]:
        for rel in layers.asked():
            want, why = explain_lookup(layers.upper, layers.lower, rel)
            got = fn(layers.upper, layers.lower, rel)
            if got is not None and not isinstance(got, (str, os.PathLike)):
                return [f"{rel} with {describe_layers(layers)}: your lookup gave {got!r:.80}; it should give a path or None"]
            if (None if got is None else os.path.normpath(os.fspath(got))) != want:
                return [f"{rel} with {describe_layers(layers)}: your lookup gave {_short(got and os.fspath(got), layers)}; "
                        f"the merged view shows {_short(want, layers)}, because {why}"]
        return []

    return run_check("lookup", trees, problems, agree="agree with overlayfs's rule")


# -- a real mount's view -------------------------------------------------------------------------
_WALK = """
import json, os, sys
seen = {}
for folder, dirs, files in os.walk("."):
    for name in dirs + files:
        path = os.path.join(folder, name)[2:]
        seen[path] = "folder" if os.path.isdir(path) else open(path).read()
print(json.dumps(seen))
"""


def merged_view(lower: str, workdir: str) -> dict[str, str]:
    """What a real overlayfs mount of ``lower`` under ``workdir/upper`` shows: every path, and
    a file's text ("folder" for a folder). Needs the kernel overlay (``OverlayUnavailable``)."""
    from nbtoolsched.sandbox import KernelOverlay

    mount = KernelOverlay(lower, workdir)
    mount.mount()
    try:
        done = subprocess.run([*mount.enter_at(mount.lower), sys.executable, "-c", _WALK],
                              capture_output=True, text=True, timeout=30, check=True)
    finally:
        mount.unmount()
    return json.loads(done.stdout)


# -- pictures ----------------------------------------------------------------------------------------
def label_of(path: str) -> str | None:
    """How a picture shows one layer's entry: a file's last line, "folder", or overlayfs's mark."""
    if is_whiteout(path):
        return "whiteout 0/0"
    if not os.path.lexists(path):
        return None
    if os.path.islink(path):
        return "link → " + os.readlink(path)[:10]
    if os.path.isdir(path):
        return "opaque folder" if is_opaque(path) else "folder"
    lines = [line.strip() for line in Path(path).read_text(errors="replace").splitlines() if line.strip()]
    if not lines:
        return "(empty)"
    last = lines[-1]  # the line a small teaching file changes
    return last if len(last) <= 15 else last[:14] + "\u2026"


def layers_picture(lower: str, upper: str, columns: Iterable[str], title: str,
                   notes: dict[str, str] | None = None) -> Picture:
    """The layers as they are on disk at ``columns`` (paths; a folder ending in "/"), and the
    merged view there by the rule: what ``layers_diagram`` draws. ``notes``: a second line
    for the upper entry at a path (what made it)."""
    columns = list(columns)
    notes = notes or {}
    up_cells: dict[str, str] = {}
    low_cells: dict[str, str] = {}
    merged: dict[str, tuple[str, str | None]] = {}
    for column in columns:
        rel = column.rstrip("/")
        up, low = label_of(os.path.join(upper, rel)), label_of(os.path.join(lower, rel))
        if up is not None:
            up_cells[column] = up + (f"\n({notes[column]})" if column in notes else "")
        if low is not None:
            low_cells[column] = low
        found, why = explain_lookup(upper, lower, rel)
        if found is not None:
            label = label_of(found) or ""
            merged[column] = ("folder" if label == "opaque folder" else label, "upper" if found.startswith(upper + os.sep) else "lower")
        elif up is not None or low is not None:
            reason = "whiteout" if "whiteout" in why else "opaque" if "opaque" in why else "a file above"
            merged[column] = ("gone" if reason == "whiteout" else "hidden", None) if reason != "opaque" else ("hidden\n(opaque)", None)
    return layers_diagram(columns, [("upper", up_cells), ("lower", low_cells)], merged, title=title,
                          merged_name="merged (the mount)")
