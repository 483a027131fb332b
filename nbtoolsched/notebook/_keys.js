// The keyboard and clicks of one panel (an anywidget, drawn as nothing).
//
// A prompt takes focus when it appears, unless a person is typing elsewhere; keys answer
// it as Claude Code's prompt does: 1 allow, 2 always allow, 3 or Esc deny, Enter in the
// feedback box denies with those words. Focus moves to the next prompt; with none left it
// goes back to the notebook. A click on a finished row opens its result.
const TYPING_MS = 1500; // a key typed in an editor this recently: the person is typing there

function editable(node) {
  return !!node && node.nodeType === 1 &&
    (node.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(node.tagName));
}

function render({ model, el }) {
  el.style.display = "none";
  let lastTyped = 0;
  let owned = false; // focus is (or was just) in this panel's prompt
  const root = () => el.closest(".nts-panel");
  const prompt = () => { const r = root(); return r ? r.querySelector(".nts-approval") : null; };

  const press = (event, selector) => {
    const p = prompt();
    const button = p && p.querySelector(selector);
    if (!button || button.disabled) return;
    event.preventDefault();
    event.stopImmediatePropagation(); // before the notebook's own shortcuts (1 makes a heading)
    owned = true;
    button.click();
  };

  const onKey = (event) => {
    const r = root();
    if (!r || !r.contains(event.target)) {
      const run = event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey || event.altKey);
      if (editable(event.target) && !run && event.key.length === 1) lastTyped = Date.now();
      return;
    }
    if (!prompt() || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.tagName === "INPUT") { // the feedback box: Enter sends it, Esc leaves it
      if (event.key === "Enter") press(event, "button.nts-deny-feedback");
      else if (event.key === "Escape") {
        event.preventDefault();
        event.stopImmediatePropagation();
        const allow = prompt() && prompt().querySelector("button.nts-allow");
        if (allow) allow.focus();
      }
      return;
    }
    if (event.key === "1") press(event, "button.nts-allow");
    else if (event.key === "2") press(event, "button.nts-always");
    else if (event.key === "3" || event.key === "Escape") press(event, "button.nts-deny");
  };

  let generation = 0; // a newer prompt (or none) cancels what an older one was waiting for
  const follow = () => { // a prompt appeared or changed: focus it, unless someone types elsewhere
    const wanted = model.get("prompt");
    const mine = ++generation;
    let tries = 0;
    const attempt = () => {
      if (mine !== generation) return;
      const r = root();
      if (!wanted) { // none left: after a moment (a serial run asks again soon), back to the notebook
        setTimeout(() => {
          if (mine !== generation) return;
          const active = document.activeElement;
          const inside = !!(r && active && r.contains(active));
          if (owned && notebook && (!active || active === document.body || inside)) notebook.focus();
          owned = false;
        }, 800);
        return;
      }
      const p = r ? r.querySelector(".nts-approval.nts-ask-" + wanted) : null;
      const button = p ? p.querySelector("button.nts-allow") : null;
      if (!button || button.disabled) { if (tries++ < 200) setTimeout(attempt, 25); return; }
      const active = document.activeElement;
      const inside = !!(r && active && r.contains(active));
      if (!inside && editable(active) && Date.now() - lastTyped < TYPING_MS) return;
      // another panel's prompt has the focus: a person is on it, and a key meant for that
      // call must not answer this one
      if (!inside && active && active.closest && active.closest(".nts-approval")) return;
      button.focus();
      owned = true;
    };
    attempt();
  };

  const onClick = (event) => {
    const r = root();
    const row = event.target.closest ? event.target.closest(".nts-row[data-id]") : null;
    if (!r || !row || !r.contains(row) || row.closest("details")) return;
    if (["completed", "error", "denied", "cancelled", "deferred"].includes(row.dataset.state)) {
      model.send({ open: row.dataset.id });
    }
  };

  window.addEventListener("keydown", onKey, true);
  let clickRoot = null;
  let notebook = null; // found while the view is in the page: it may be gone when focus goes back
  let waited = 0;
  const attach = () => {
    const r = root();
    if (!r) { if (waited++ < 400) setTimeout(attach, 25); return; } // until the view is in the page
    clickRoot = r;
    notebook = el.closest(".jp-Notebook");
    r.addEventListener("click", onClick);
    follow();
  };
  attach();
  model.on("change:prompt", follow);
  return () => { // the view is gone (its run ended): focus that was in it goes back to the notebook
    const active = document.activeElement;
    if (owned && notebook && notebook.isConnected && (!active || active === document.body)) {
      setTimeout(() => { if (document.activeElement === document.body) notebook.focus(); }, 0);
    }
    window.removeEventListener("keydown", onKey, true);
    if (clickRoot) clickRoot.removeEventListener("click", onClick);
    model.off("change:prompt", follow);
  };
}

export default { render };
