"""Two small browser-side widgets (anywidget) that ipywidgets has no equivalent for.

``PanelKeys`` is drawn as nothing: it gives a panel's prompt the keyboard (1 allow,
2 always allow, 3 or Esc deny, Enter in the feedback box), moves focus from one prompt
to the next, and turns a click on a finished row into "open its result". ``RuleChoice``
is a native ``<select>`` whose labels keep their spaces (ipywidgets' Dropdown draws
them as non-breaking spaces, so a copied rule would not match).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import anywidget
import traitlets

__all__ = ["PanelKeys", "RuleChoice"]

_HERE = Path(__file__).parent


class PanelKeys(anywidget.AnyWidget):
    """The keyboard of one panel; ``prompt`` names the prompt shown (``nts-ask-<prompt>``)."""

    _esm = _HERE / "_keys.js"
    prompt = traitlets.Unicode("").tag(sync=True)

    def __init__(self, on_open: Callable[[str], None]) -> None:
        super().__init__()
        self._on_open = on_open
        self.on_msg(self._message)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Any thread (a kernel subshell): a row was clicked."""
        if isinstance(content, dict) and isinstance(content.get("open"), str):
            self._on_open(content["open"])


_RULE_JS = """
function render({ model, el }) {
  const select = document.createElement("select");
  select.className = "nts-rule-select";
  select.title = "the rule Always allow saves";
  const draw = () => {
    select.replaceChildren(...model.get("labels").map((label, index) => {
      const option = document.createElement("option");
      option.value = String(index);
      option.textContent = label;  // real spaces: a copied rule is the rule
      return option;
    }));
    select.value = String(model.get("value"));
  };
  select.addEventListener("change", () => { model.set("value", Number(select.value)); model.save_changes(); });
  model.on("change:labels", draw);
  model.on("change:value", () => { select.value = String(model.get("value")); });
  draw();
  el.appendChild(select);
  return () => { model.off("change:labels", draw); };
}
export default { render };
"""


class RuleChoice(anywidget.AnyWidget):
    """Which rule Always allow saves: ``value`` is an index into ``labels``."""

    _esm = _RULE_JS
    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    value = traitlets.Int(0).tag(sync=True)

    def __init__(self, labels: Sequence[str]) -> None:
        super().__init__(labels=list(labels), value=0)
