"""What a command line's facts mean against the path rules and the protected places.

Each function takes the facts the shell layer stated (a part's names and what it changes,
what it may read, its redirections, the folders its relative names start from) and
answers with a verdict short of allow, or None: a path a deny rule covers, a path outside
the working directories, a protected file a word names, a folder it searches that holds
protected files, a redirection that writes without Edit permission. No command text is
read here.
"""

from __future__ import annotations

import os

from .._tool._decision import Decision, DecisionReason
from ..shell import (MAX_LINK_WALK, LineFacts, PartFacts, ReadTargets, Redirection, inside_working_dirs, links_under,
                     safety_concern)
from ._checks import (CallFacts, decide, edit_check, first_path_rule, is_immune_ask, outside_working_dirs, path_rules,
                      protected_reads, read_check)
from ._matching import path_rule_matches, path_rule_may_match_within
from ._rules import PermissionRule

__all__ = ["line_exposure", "part_paths", "read_exposure", "reads_outside", "redirection_verdict", "guessed_reads",
           "strongest", "process_path_ask"]

Bases = tuple[str, ...]
_HARMLESS_DEVICES = frozenset({"/dev/null"})


def strongest(*verdicts: Decision | None) -> Decision | None:
    """The deny, else the ask that holds in every mode, else the first verdict given."""
    given = [v for v in verdicts if v is not None]
    return next((v for v in given if v.behavior == "deny"), None) or next((v for v in given if is_immune_ask(v)), None) or (
        given[0] if given else None)


def process_path_ask(raw: str) -> Decision:
    return Decision.ask(
        f"{raw} goes through /proc/self, /proc/thread-self or /dev/fd, which the command resolves in its own "
        "process, so the file it opens cannot be told.",
        DecisionReason("tool", "a path the command resolves in its own process"),
    )


# -- redirections ------------------------------------------------------------------------------
def redirection_verdict(facts: CallFacts, line: LineFacts, redirection: Redirection, bases: Bases | None) -> Decision | None:
    """A redirection's target is a path too (the splitter drops it from the parts).

    An output redirection writes a file, so it needs what an Edit of that file needs (an
    Edit allow rule, or acceptEdits mode inside the working dirs) whatever allow rule or
    read-only verdict covers the command: ``git status > README.md`` empties README.md.
    An input redirection needs what a Read needs. A relative target is judged from every
    folder a ``cd`` in the line may have moved to (``bases``; None: unknown, so ask)."""
    if redirection.computed:
        return Decision.ask(f"The redirection {redirection.text!r} uses a path the shell computes.",
                            DecisionReason("other", "dynamic redirect"))
    if redirection.paths is None:
        return Decision.ask(f"The redirection {redirection.text!r} names more paths than can be checked.",
                            DecisionReason("safety_check", "a redirection brace expansion too large to check"))
    verdict: Decision | None = None
    paths: list[str] = []
    for target in redirection.paths:
        if bases is None and not _absolute(target):
            return Decision.ask(f"The redirection {redirection.text!r} follows a `cd` the shell decides.",
                                DecisionReason("other", "redirect after a dynamic cd"))
        verdict, paths = _target_verdict(facts, line, target, redirection.output, bases or (facts.cwd,))
        if verdict is not None:
            break
    if verdict is None or verdict.behavior == "deny" or is_immune_ask(verdict):
        return verdict
    if redirection.output:
        return Decision.ask(
            f"The redirection {redirection.text!r} writes to {paths[0]}, which needs Edit permission "
            "(an Edit allow rule, or acceptEdits mode inside the working directories).",
            DecisionReason("tool", "output redirect without edit permission"),
        )
    return Decision.ask(f"The redirection {redirection.text!r} reads {paths[0]}, which is outside the working directories.",
                        DecisionReason("tool", "redirect outside working directories"))


def _absolute(path: str) -> bool:
    return os.path.isabs(os.path.expanduser(path))


def _target_verdict(facts: CallFacts, line: LineFacts, target: str, output: bool, bases: Bases) -> tuple[Decision | None, list[str]]:
    """The first verdict short of allow for the target seen from any base (None: allowed)."""
    paths: list[str] = []
    for base in bases:
        found = line.paths(target, base)
        if found is None:
            return process_path_ask(target), [target]
        paths = found
        verdict = edit_check(facts, paths) if output else read_check(facts, paths)
        if verdict.behavior != "allow":
            return verdict, paths
    return None, paths


# -- the names a part is given -------------------------------------------------------------------
def part_paths(facts: CallFacts, line: LineFacts, part: PartFacts) -> Decision | None:
    """The names a well-known program is given (its row's ``paths``: files it reads,
    creates or changes) must stay inside the working dirs, or be allowed; a deny rule on
    any of them denies. Before anything else, a write into a tool's config or a shell's
    startup file asks even in bypass mode, as an Edit there does (``cp -f x
    .git/hooks/pre-commit``, ``tee .claude/settings.json``, ``mv --target-directory=.git/hooks x``)."""
    if part.words is None:
        return Decision.ask(f"Could not read the arguments of `{part.peeled}`.", DecisionReason("other", "unparsable arguments"))
    if not part.words or part.row.paths is None:
        return None
    family = "Read" if part.row.paths == "read" else "Edit"
    if family == "Edit":
        concern = _write_concern(facts, line, part.written)
        if concern is not None:
            return concern
    pending: Decision | None = None  # the first ask; a deny of a later name still wins
    if part.row.options_ask and part.has_options:  # Claude Code: asked, after the deny rules had their say
        pending = Decision.ask(f"`{part.row.name}` with flags needs approval so its paths can be checked.",
                               DecisionReason("other", f"{part.row.name} with flags"))
    for name in part.names:
        if any(ch in name for ch in "$`"):
            pending = pending or Decision.ask(f"`{part.peeled}` uses a path that depends on the shell's expansion.",
                                              DecisionReason("other", "unverifiable path"))
            continue
        base = name.split("*")[0].split("?")[0].split("[")[0] or "."
        found = line.paths(base, facts.cwd)
        if found is None:
            pending = pending or process_path_ask(name)
            continue
        rule = first_path_rule(facts, "deny", family, found)
        if rule is not None:
            return decide(rule, f"`{part.peeled}` touching {found[0]}")
        pending = pending or outside_working_dirs(
            facts, family, found, f"`{part.peeled}` {'reads' if family == 'Read' else 'changes'}")
    return pending


def _write_concern(facts: CallFacts, line: LineFacts, words: tuple[str, ...]) -> Decision | None:
    """The safety-check ask when one of ``words`` names a path in a tool's config folder
    or a shell's startup file, or None."""
    for word in words:
        if not word or any(ch in word for ch in "$`"):
            continue
        found = line.paths(word, facts.cwd)
        concern = safety_concern(found) if found is not None else None
        if concern:
            return Decision.ask(f"Changing files there needs approval: {concern}.", DecisionReason("safety_check", concern))
    return None


# -- what a part reads ---------------------------------------------------------------------------
def guessed_reads(facts: CallFacts, where: str | None = None) -> list[PermissionRule]:
    """The Read rules judged against what a command may read without naming it (folders it
    searches, file lists from its input, a folder the shell decides). Under a sandbox that
    masks every path a deny rule protects, the kernel holds those reads: only ask rules
    remain (a sandbox cannot stop to ask). ``where``: the folder it reads (None: it may
    read anywhere), so masks covering the working directories are enough inside them. A
    word that names a protected file is still judged by every rule, as without a sandbox."""
    inside = where is not None and inside_working_dirs([where], facts.working_dirs)
    covered = facts.masked_everywhere or (facts.masked_reads and inside)
    return path_rules(facts, "ask", "Read") if covered else protected_reads(facts)


def read_exposure(facts: CallFacts, line: LineFacts, part: PartFacts, bases: Bases | None) -> Decision | None:
    """A part that may read a path a Read deny or ask rule protects is not auto-allowed.

    Covers what it names (``sed -n p .env``, ``git show HEAD:.env``), folders it may
    descend into (``grep -r x .``, ``find``, ``rg`` with no path), globs (``cat .e*``) and
    file lists it reads from its input (``xargs cat``). Stricter than Claude Code, which
    checks only the paths a few commands name and so lets those print a denied file. A
    word naming a protected file asks in every mode, bypass too (a deny rule beats
    bypass), whatever else the command does; folders, globs, input lists and words the
    shell computes are a wider guess, whose ask bypass lets through."""
    protected = protected_reads(facts)
    if not protected:
        return None
    reason = DecisionReason("tool", "may read a path a Read rule protects")
    judged_from = bases or (facts.cwd,)
    targets = line.reads(part, judged_from)
    named = _named_exposure(facts, line, part.peeled, targets, judged_from, protected)
    if named is not None and (bases is not None or is_immune_ask(named)):
        return named  # after a cd the shell decides, a name is still judged from cwd
    protected = guessed_reads(facts)
    if bases is None:
        # Its relative names may be anything there (`cd "$D" && cat key.txt`): like a name
        # of the protected file itself, this asks even in bypass mode.
        if not protected:
            return None
        return Decision.ask(f"`{part.peeled}` runs in a folder the shell decides, so it may read a path {protected[0].text} protects.",
                            DecisionReason("safety_check", "reads in a folder the shell decides"))
    if targets.unknown and protected:
        return Decision.ask(f"`{part.peeled}` {targets.unknown}, so it may read a path the rule {protected[0].text} protects.", reason)
    for raw in targets.trees:
        for base in bases:
            found = line.paths(raw, base)
            if found is None:
                return process_path_ask(raw)
            judged = guessed_reads(facts, found[0]) if not targets.history else protected_reads(facts)
            rule = next((r for r in judged if path_rule_may_match_within(r, found, facts.cwd, facts.home)), None)
            if rule is not None and targets.history:
                # git prints from its objects: copies of a protected file that a deny rule's
                # path, and a sandbox's mask, never cover. As a name of the file: every mode.
                return Decision.ask(f"`{part.peeled}` may print file content from the history of the repository at {found[0]}, "
                                    f"which can hold files the rule {rule.text} ({rule.origin or rule.source}) protects.",
                                    DecisionReason("safety_check", "may print protected files from git's history"))
            if rule is not None:
                return Decision.ask(f"`{part.peeled}` may read files under {found[0]}, where the rule {rule.text} "
                                    f"({rule.origin or rule.source}) protects reads.", reason)
            if targets.follows_links and judged:
                linked = _linked_exposure(facts, line, part.peeled, found[0], judged, reason)
                if linked is not None:
                    return linked
    return None


def _named_exposure(facts: CallFacts, line: LineFacts, what: str, targets: ReadTargets, bases: Bases,
                    protected: list[PermissionRule]) -> Decision | None:
    """A safety-check ask (bypass-immune) when a file the words name is one a rule
    protects; else the ask for a name that cannot be resolved here (/proc/self/...)."""
    if targets.unlisted:
        return Decision.ask(f"`{what}` has words that may name a path the rule {protected[0].text} protects: "
                            f"{targets.unlisted}.", DecisionReason("safety_check", "names too many paths to check"))
    unresolved: Decision | None = None
    for raw in targets.files:
        for base in bases:
            found = line.paths(raw, base)
            if found is None:
                unresolved = unresolved or process_path_ask(raw)
                continue
            rule = next((r for r in protected if path_rule_matches(r, found, facts.cwd, facts.home)), None)
            if rule is not None:
                # A word that names the protected file: a safety check, so it asks even in
                # bypass mode. Not a deny: the word may be a pattern (``grep .env x``).
                return Decision.ask(f"`{what}` may read {found[0]}, which the rule {rule.text} ({rule.origin or rule.source}) protects.",
                                    DecisionReason("safety_check", "names a path a Read rule protects"))
    return unresolved


def line_exposure(facts: CallFacts, line: LineFacts, bases: Bases | None) -> Decision | None:
    """A protected file named anywhere in the line (loops, substitutions, ``sh -c``
    strings, code fed to a shell's input): the per-part checks see none of these when the
    line cannot be split, and never look inside a string that runs. A bypass-immune ask,
    as for a command naming the file itself (relative names judged from cwd when a ``cd``
    the shell decides comes first)."""
    protected = protected_reads(facts)
    if not protected:
        return None
    judged_from = bases or (facts.cwd,)
    named = _named_exposure(facts, line, line.command, line.names(judged_from), judged_from, protected)
    return named if named is not None and is_immune_ask(named) else None


def _linked_exposure(facts: CallFacts, line: LineFacts, what: str, folder: str, protected: list[PermissionRule],
                     reason: DecisionReason) -> Decision | None:
    """A folder the command reads may hold symlinks into a protected path (``docs/k ->
    ../secrets/key.txt``), which ``grep -R``, ``diff -r`` and globs follow."""
    links = links_under(folder)
    if links is None:
        return Decision.ask(
            f"`{what}` reads {folder}, which holds more than {MAX_LINK_WALK} entries, so whether links in it lead "
            f"to a path the rule {protected[0].text} protects cannot be told.",
            reason,
        )
    for link in links:
        found = line.paths(link, facts.cwd)
        if found is None:
            return process_path_ask(link)
        rule = next((r for r in protected if path_rule_may_match_within(r, found, facts.cwd, facts.home)), None)
        if rule is not None:
            return Decision.ask(f"`{what}` may read {found[-1]} through the link {link}, where the rule {rule.text} "
                                f"({rule.origin or rule.source}) protects reads.", reason)
    return None


def reads_outside(facts: CallFacts, line: LineFacts, part: PartFacts, bases: Bases | None) -> Decision | None:
    """A read-only part is allowed without asking only if every file it names is inside
    the working directories (or under a Read allow rule) and what it reads can be told from
    its words: not only the well-known programs ``part_paths`` reads, but ``diff
    --to-file=../x f``, ``comm f /x``, ``jq . ../x``, ``git diff --no-index f /x``, ``wc
    --files0-from=list``. (Claude Code checks the paths of a fixed list of commands.) A
    command an allow rule names is the rule's business, as in Claude Code."""
    if bases is None:
        return None  # after a cd the shell decides: read_exposure and the structure step judge it
    targets = line.reads(part, bases)
    if targets.unknown and not facts.masked_everywhere:  # sandboxed: the masks and the read-only tree hold whatever it reads
        return Decision.ask(f"`{part.peeled}` {targets.unknown}, so the files it reads cannot be checked against the working directories.",
                            DecisionReason("tool", "reads files that cannot be told"))
    for raw in targets.files:
        if raw in _HARMLESS_DEVICES:
            continue
        for base in bases:
            found = line.paths(raw, base)
            if found is None:
                return process_path_ask(raw)
            outside = outside_working_dirs(facts, "Read", found, f"`{part.peeled}` may read")
            if outside is not None:
                return outside
    return None
