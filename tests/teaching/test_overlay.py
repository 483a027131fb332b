"""The checker of chapter 15 (``teaching.overlay``): a wrong lookup is named, the right one passes.

Its reference rule is checked against the library's merged-view code (``KernelOverlay.lookup``)
and against what a program sees in a real overlayfs mount of the same layers.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

from teaching import real_marks
from teaching.overlay import (CASES, check_lookup, describe_layers, explain_lookup, layers_picture, merged_view,
                              random_layers, reference_lookup)


def unwritten(*args: Any) -> Any:
    raise NotImplementedError


def upper_then_lower(upper: str, lower: str, rel: str) -> str | None:
    """Wrong: the upper path if anything is there, else the lower one; marks never read."""
    for layer in (upper, lower):
        path = os.path.join(layer, rel)
        if os.path.lexists(path):
            return path
    return None


def blind_to_opaque(upper: str, lower: str, rel: str) -> str | None:
    """Wrong: whiteouts hide, but an opaque folder is merged with lower's like any other."""
    from teaching import is_whiteout

    up, low = upper, lower
    for name in rel.split(os.sep):
        up, low = os.path.join(up, name), os.path.join(low, name)
        if is_whiteout(up):
            return None
    if os.path.lexists(up):
        return up
    return low if os.path.lexists(low) else None


def test_lookup_wrong_answer_is_named() -> None:
    verdict = check_lookup(upper_then_lower)
    assert not verdict.ok
    text = str(verdict)
    assert "your lookup gave" in text and "the merged view shows nothing (None)" in text
    assert "whiteout in upper" in text


def test_lookup_blind_to_opaque_is_named() -> None:
    verdict = check_lookup(blind_to_opaque)
    assert not verdict.ok
    assert "is an opaque folder in upper, so lower's entries under it are hidden" in str(verdict)


def test_lookup_wrong_type_is_named() -> None:
    verdict = check_lookup(lambda upper, lower, rel: 42)
    assert not verdict.ok and "it should give a path or None" in str(verdict)


def test_lookup_right_answer_passes() -> None:
    verdict = check_lookup(reference_lookup)
    assert verdict.ok, str(verdict)
    assert str(verdict) == f"✓ lookup: all {CASES} cases agree with overlayfs's rule."


def test_lookup_unfilled_stub_is_not_written_yet() -> None:
    assert "not written yet" in str(check_lookup(unwritten))


def test_random_layers_cover_every_case() -> None:
    """The seeded layers hold whiteouts, opaque folders, and paths each rule decides."""
    rng = random.Random(15)
    reasons: set[str] = set()
    for _ in range(CASES):
        layers = random_layers(rng)
        assert describe_layers(layers).startswith("upper: ")
        for rel in layers.asked():
            reasons.add(explain_lookup(layers.upper, layers.lower, rel)[1])
    joined = " | ".join(sorted(reasons))
    for needed in ("whiteout in upper", "opaque folder in upper", "upper entry wins", "only lower has it",
                   "file in upper, and a file has no entries", "neither layer"):
        assert needed in joined, needed


@pytest.mark.skipif(not real_marks() or os.name != "posix", reason="overlayfs's marks cannot be made here")
def test_reference_matches_the_library_lookup() -> None:
    from nbtoolsched.sandbox import KernelOverlay

    rng = random.Random(3)
    for _ in range(60):
        layers = random_layers(rng)
        library = KernelOverlay(layers.lower, layers.workdir)  # upper: workdir/upper; nothing mounted
        for rel in layers.asked():
            assert library.lookup(rel)[0] == reference_lookup(layers.upper, layers.lower, rel), (rel, describe_layers(layers))


def test_reference_matches_a_real_mount() -> None:
    """What a program sees in overlayfs mounted over the same layers: the same paths, each
    file from the layer the rule says (a file's text names its layer)."""
    from nbtoolsched.sandbox import OverlayUnavailable

    rng = random.Random(4)
    checked = 0
    for _ in range(25):
        layers = random_layers(rng)
        if not real_marks():
            pytest.skip("overlayfs's marks cannot be made here")
        try:
            seen = merged_view(layers.lower, layers.workdir)
        except (OverlayUnavailable, OSError) as err:
            pytest.skip(f"overlayfs cannot be mounted here: {err}")
        for rel in layers.asked():
            want = reference_lookup(layers.upper, layers.lower, rel)
            real = seen.get(rel)
            assert (real is None) == (want is None), (rel, real, want, describe_layers(layers))
            if want is not None and real != "folder":
                layer = "upper" if want.startswith(layers.upper + os.sep) else "lower"
                assert real == f"{layer} {rel}\n", (rel, real, describe_layers(layers))
            checked += 1
        assert set(seen) <= set(layers.asked())  # nothing shows that the rule was not asked about
    assert checked > 200


def test_layers_picture_draws_the_marks() -> None:
    rng = random.Random(15)
    layers = next(layer for layer in (random_layers(rng) for _ in range(CASES))
                  if "whiteout" in layer.upper_kinds.values() and "opaque" in layer.upper_kinds.values())
    columns = [rel + ("/" if kind != "file" and kind != "whiteout" else "") for rel, kind in sorted(layers.upper_kinds.items())]
    picture = layers_picture(layers.lower, layers.upper, columns, "layers")
    assert "whiteout 0/0" in picture.svg and "opaque folder" in picture.svg and "merged (the mount)" in picture.svg
    assert repr(picture) == "<picture: layers>"
