"""Data tables for the read-only shell check (no logic beyond parsing the tables).

Facts follow Claude Code's read-only validation (reference §5 and its Appendix); the
wording and layout are ours. Flag lists are written as one string per command so they
read like the Appendix: a bare flag takes no value, ``flag=TYPE`` takes one (inline with
``=`` or as the next word) and ``flag[=]`` takes an optional inline value only.

A ``flag[=]`` must be exactly the options git parses with an optional argument
(PARSE_OPT_OPTARG: ``--abbrev``, ``--column``, ``-U``...): typed ``flag=TYPE`` instead,
the check would take the next word as its value while git takes it as a positional,
and for ``git branch`` and ``git tag`` a positional is the name of a ref to create
(``git branch --abbrev 7`` creates the branch ``7``). Checked against real git in
tests/shell/test_git_flags.py. We differ from Claude Code's lists here on purpose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ._programs import PROGRAMS, allow_peeled_options

# Argument types a flag may take.
NONE = "none"  # no value
NUMBER = "number"  # ^\d+$
STRING = "string"  # anything not starting with "-"
CHAR = "char"  # exactly one character
BRACES = "{}"  # the literal {}
EOF = "EOF"  # the literal EOF
OPTIONAL = "optional"  # optional value, inline only (--color or --color=always)

_TYPE_NAMES = {"number": NUMBER, "string": STRING, "char": CHAR, "{}": BRACES, "EOF": EOF}


def _flags(spec: str) -> Mapping[str, str]:
    """Turn "--a -b=number --c[=]" into {"--a": NONE, "-b": NUMBER, "--c": OPTIONAL}."""
    table: dict[str, str] = {}
    for item in spec.split():
        if item.endswith("[=]"):
            table[item[:-3]] = OPTIONAL
        elif "=" in item[1:]:
            name, _, kind = item.rpartition("=")
            table[name] = _TYPE_NAMES[kind]
        else:
            table[item] = NONE
    return MappingProxyType(table)


@dataclass(frozen=True, slots=True)
class FlagSpec:
    """How to validate the words after a command key such as ``git log`` or ``grep``."""

    flags: Mapping[str, str]
    # "--" ends option parsing (False for tools that keep parsing options after it).
    respects_double_dash: bool = True
    # getopt-style attached values (-A3, -k2,2n) for short flags that take a value.
    attached_values: bool = True
    # "-<digits>" is a count (git log -5).
    numeric_shorthand: bool = False
    # Flags whose string value may start with "-" (git --sort=-committerdate).
    dash_values: frozenset[str] = field(default_factory=frozenset)


# --------------------------------------------------------------------------- git
_GIT_LOG_LIKE = (
    "--oneline --graph --decorate[=] --no-decorate --date=string --relative-date --all"
    " --branches --tags --remotes --since=string --after=string --until=string"
    " --before=string --max-count=number -n=number"
)
_GIT_DIFF_OUTPUT = (
    "--stat[=] --numstat --shortstat --name-only --name-status --color[=] --no-color"
    " --patch -p --no-patch --no-ext-diff -s"
)

# Longest keys first does not matter: lookup tries three words, then two.
GIT_READONLY: Mapping[tuple[str, ...], str] = MappingProxyType({
    ("git", "diff"): (
        "--stat[=] --numstat --shortstat --name-only --name-status --color[=] --no-color"
        " --dirstat[=] --summary --patch-with-stat --word-diff[=] --word-diff-regex=string"
        " --color-words[=] --no-renames --no-ext-diff --check --ws-error-highlight=string"
        " --full-index --binary --abbrev[=] --break-rewrites[=] --find-renames[=]"
        " --find-copies[=] --find-copies-harder --irreversible-delete"
        " --diff-algorithm=string --histogram --patience --minimal --ignore-space-at-eol"
        " --ignore-space-change --ignore-all-space --ignore-blank-lines"
        " --inter-hunk-context=number --function-context --exit-code --quiet --cached"
        " --staged --pickaxe-regex --pickaxe-all --no-index --relative[=]"
        " --diff-filter=string -p -u -s -M[=] -C[=] -B[=] -D -l=number -S=string -G=string"
        " -O=string -R --unified[=] -U[=] -w -b --merge-base --no-prefix --src-prefix=string"
        " --dst-prefix=string"
    ),
    # Beyond Claude Code's list, on purpose: -i/--regexp-ignore-case, --all-match,
    # --invert-grep, -E, -F and -L only change which commits match or which lines show.
    ("git", "log"): (
        _GIT_LOG_LIKE + " " + _GIT_DIFF_OUTPUT
        + " --author=string --committer=string --grep=string --abbrev-commit --full-history"
        " --dense --sparse --simplify-merges --ancestry-path --source --first-parent"
        " --merges --no-merges --reverse --walk-reflogs --skip=number --max-age=number"
        " --min-age=number --no-min-parents --no-max-parents --follow --no-walk"
        " --left-right --cherry-mark --cherry-pick --boundary --topo-order --date-order"
        " --author-date-order --pretty[=] --format[=] --diff-filter=string -S=string"
        " -G=string --pickaxe-regex --pickaxe-all -i --regexp-ignore-case --all-match"
        " --invert-grep -E --extended-regexp -F --fixed-strings -L=string"
    ),
    ("git", "show"): (
        "--oneline --graph --decorate[=] --no-decorate --date=string --relative-date "
        + _GIT_DIFF_OUTPUT
        + " --abbrev-commit --word-diff[=] --word-diff-regex=string --color-words[=]"
        " --pretty[=] --format[=] --first-parent --raw --diff-filter=string -m --quiet"
    ),
    ("git", "shortlog"): (
        "--all --branches --tags --remotes --since=string --after=string --until=string"
        " --before=string -s --summary -n --numbered -e --email -c --committer"
        " --group=string --format[=] --no-merges --author=string"
    ),
    ("git", "reflog"): (
        _GIT_LOG_LIKE + " --author=string --committer=string --grep=string"
    ),
    ("git", "stash", "list"): _GIT_LOG_LIKE,
    ("git", "ls-remote"): (
        "--branches -b --tags -t --heads -h --refs --quiet -q --exit-code --get-url"
        " --symref --sort=string"
    ),
    ("git", "status"): (
        "--short -s --branch -b --porcelain[=] --long --verbose -v --untracked-files[=]"
        " -u[=] --ignored[=] --ignore-submodules[=] --column[=] --no-column --ahead-behind"
        " --no-ahead-behind --renames --no-renames --find-renames[=] -M[=] -z"
    ),
    ("git", "blame"): (
        "--color --no-color -L=string --porcelain -p --line-porcelain --incremental --root"
        " --show-stats --show-name --show-number -n --show-email -e -f --date=string -w"
        " --ignore-rev=string --ignore-revs-file=string -M -C --score-debug"
        " --abbrev[=] -s -l -t"
    ),
    ("git", "ls-files"): (
        "--cached -c --deleted -d --modified -m --others -o --ignored -i --stage -s"
        " --killed -k --unmerged -u --directory --no-empty-directory --eol --full-name"
        " --abbrev[=] --debug -z -t -v -f --exclude=string -x=string"
        " --exclude-from=string -X=string --exclude-per-directory=string"
        " --exclude-standard --error-unmatch --recurse-submodules"
    ),
    ("git", "config", "--get"): (
        "--local --global --system --worktree --default=string --type=string --bool --int"
        " --bool-or-int --path --expiry-date -z --null --name-only --show-origin"
        " --show-scope"
    ),
    ("git", "remote", "show"): "-n",
    ("git", "remote"): "-v --verbose",
    ("git", "merge-base"): "--is-ancestor --fork-point --octopus --independent --all",
    ("git", "rev-parse"): (
        "--verify --short[=] --abbrev-ref[=] --symbolic --symbolic-full-name"
        " --show-toplevel --show-cdup --show-prefix --git-dir --git-common-dir"
        " --absolute-git-dir --show-superproject-working-tree --is-inside-work-tree"
        " --is-inside-git-dir --is-bare-repository --is-shallow-repository"
        " --is-shallow-update --path-prefix=string -q --quiet"
    ),
    ("git", "rev-list"): (
        "--all --branches --tags --remotes --since=string --after=string --until=string"
        " --before=string --max-count=number -n=number --author=string --committer=string"
        " --grep=string --count --reverse --first-parent --ancestry-path --merges"
        " --no-merges --min-parents=number --max-parents=number --no-min-parents"
        " --no-max-parents --skip=number --max-age=number --min-age=number --walk-reflogs"
        " --oneline --abbrev-commit --pretty[=] --format[=] --abbrev[=]"
        " --full-history --dense --sparse --source --graph --left-right"
    ),
    ("git", "describe"): (
        "--tags --match=string --exclude=string --long --abbrev[=] --always --contains"
        " --first-match --exact-match --candidates=number --dirty[=] --broken[=] --all"
    ),
    ("git", "cat-file"): "-t -s -p -e --batch-check --allow-undetermined-type",
    ("git", "for-each-ref"): (
        "--format=string --sort=string --count=number --contains=string"
        " --no-contains=string --merged=string --no-merged=string --points-at=string"
    ),
    ("git", "grep"): (
        "-e=string -E --extended-regexp -G --basic-regexp -F --fixed-strings -P"
        " --perl-regexp -i --ignore-case -v --invert-match -w --word-regexp -n"
        " --line-number -c --count -l --files-with-matches -L --files-without-match -h -H"
        " --heading --break --full-name --color[=] --no-color -o --only-matching"
        " -A=number --after-context=number -B=number --before-context=number -C=number"
        " --context=number --and --or --not --max-depth=number --untracked --no-index"
        " --recurse-submodules --cached --threads=number -q --quiet -I -W"
        " --function-context"
    ),
    ("git", "stash", "show"): (
        "--stat[=] --numstat --shortstat --name-only --name-status --color[=] --no-color"
        " --patch -p --no-patch --no-ext-diff -s --word-diff[=] --word-diff-regex=string"
        " --diff-filter=string --abbrev[=]"
    ),
    ("git", "worktree", "list"): "--porcelain -v --verbose --expire=string -z",
    ("git", "tag"): (
        "-l --list -n[=] --contains=string --no-contains=string --merged=string"
        " --no-merged=string --sort=string --format=string --points-at=string --column[=]"
        " --no-column -i --ignore-case"
    ),
    ("git", "branch"): (
        "-l --list -a --all -r --remotes -v -vv --verbose --color[=] --no-color --column[=]"
        " --no-column --abbrev[=] --no-abbrev --contains=string --no-contains=string"
        " --merged --no-merged --points-at=string --sort=string --show-current -i"
        " --ignore-case"
    ),
    ("git", "version"): "",
})

# Global options that only change presentation; any other option before the git
# subcommand (-c, -C, --git-dir, --exec-path, -p/--paginate, ...) is refused.
GIT_SAFE_GLOBAL_OPTIONS = frozenset({"--no-pager", "-P", "--no-optional-locks"})

# A positional among these makes `git reflog` write.
GIT_REFLOG_WRITERS = frozenset({"expire", "delete", "exists"})
# Flags that put `git branch` / `git tag` into listing mode (positionals are patterns).
GIT_BRANCH_LIST_FLAGS = frozenset({
    "-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
    "--points-at",
})
GIT_TAG_LIST_FLAGS = frozenset({"-l", "--list", "-n"})  # git tag -n<num> lists

# ------------------------------------------------------------------ other tools
_GREP = (
    "-e=string --regexp=string -f=string --file=string -F --fixed-strings -G"
    " --basic-regexp -E --extended-regexp -P --perl-regexp -i --ignore-case"
    " --no-ignore-case -v --invert-match -w --word-regexp -x --line-regexp -c --count"
    " --color[=] --colour[=] -L --files-without-match -l --files-with-matches"
    " -m=number --max-count=number -o --only-matching -q --quiet --silent -s"
    " --no-messages -b --byte-offset -H --with-filename -h --no-filename --label=string"
    " -n --line-number -T --initial-tab -u --unix-byte-offsets -Z --null -z --null-data"
    " -A=number --after-context=number -B=number --before-context=number -C=number"
    " --context=number --group-separator=string --no-group-separator -a --text"
    " --binary-files=string -D=string --devices=string -d=string --directories=string"
    " --exclude=string --exclude-from=string --exclude-dir=string --include=string -r"
    " --recursive -R --dereference-recursive --line-buffered -U --binary --help -V"
    " --version -I"
)
_CHECKSUM = (
    "-b --binary -t --text -c --check --ignore-missing --quiet --status --strict -w"
    " --warn --tag -z --zero --help --version"
)
_FD = (
    "-h --help -V --version -H --hidden -I --no-ignore --no-ignore-vcs"
    " --no-ignore-parent -s --case-sensitive -i --ignore-case -g --glob --regex -F"
    " --fixed-strings -a --absolute-path -L --follow -p --full-path -0 --print0"
    " -d=number --max-depth=number --min-depth=number --exact-depth=number -t=string"
    " --type=string -e=string --extension=string -S=string --size=string"
    " --changed-within=string --changed-before=string -o=string --owner=string"
    " -E=string --exclude=string --ignore-file=string -c=string --color=string"
    " -j=number --threads=number --max-buffer-time=string --max-results=number -1 -q"
    " --quiet --show-errors --strip-cwd-prefix[=] --one-file-system --prune"
    " --search-path=string --base-directory=string --path-separator=string"
    " --batch-size=number --no-require-git --hyperlink[=] --and=string --format=string"
)

OTHER_READONLY: Mapping[tuple[str, ...], str] = MappingProxyType({
    ("xargs",): "-I={} -n=number -P=number -L=number -s=number -E=EOF -0 -t -r -x -d=char"
    " --null --no-run-if-empty --verbose --max-args=number --max-procs=number",
    ("file",): (
        "--brief -b --mime -i --mime-type --mime-encoding --apple --check-encoding -c"
        " --exclude=string --exclude-quiet=string --print0 -0 -f=string -F=string"
        " --separator=string --help --version -v --no-dereference -h --dereference -L"
        " --magic-file=string -m=string --keep-going -k --list -l --no-buffer -n"
        " --preserve-date -p --raw -r -s --special-files --uncompress -z"
    ),
    ("sort",): (
        "--ignore-leading-blanks -b --dictionary-order -d --ignore-case -f"
        " --general-numeric-sort -g --human-numeric-sort -h --ignore-nonprinting -i"
        " --month-sort -M --numeric-sort -n --random-sort -R --reverse -r --sort=string"
        " --stable -s --unique -u --version-sort -V --zero-terminated -z --key=string"
        " -k=string --field-separator=string -t=string --check[=] -c --check-char-order -C"
        " --merge -m --buffer-size=string -S=string --parallel=number"
        " --batch-size=number --help --version"
    ),
    ("man",): "-a --all -d -f --whatis -h -k --apropos -w -S=string -s=string",
    ("help",): "-d -m -s",
    ("netstat",): "-a -L -l -n -f=string -g -i -I=string -s -r -m -v -t -u -p -e -W",
    ("ps",): (
        "-e -A -a -d -N --deselect -f -F -l -j -y -w -ww --width=number -c -H --forest"
        " --headers --no-headers -n=string --sort=string -L -T -m -C=string -G=string"
        " -g=string -p=string --pid=string -q=string --quick-pid=string -s=string"
        " --sid=string -t=string --tty=string -U=string -u=string --user=string -o=string"
        " --format=string --help --info -V --version"
    ),
    ("base64",): (
        "-d -D --decode -b=number --break=number -w=number --wrap=number -i=string"
        " --input=string --ignore-garbage -h --help --version"
    ),
    ("grep",): _GREP,
    ("egrep",): _GREP,
    ("fgrep",): _GREP,
    ("rg",): (
        "-e=string --regexp=string -f=string -i --ignore-case -S --smart-case -F"
        " --fixed-strings -w --word-regexp -v --invert-match -c --count -l"
        " --files-with-matches --files-without-match -n --line-number -N"
        " --no-line-number -o --only-matching -A=number --after-context=number -B=number"
        " --before-context=number -C=number --context=number -H --with-filename -h"
        " --no-filename --heading --no-heading -q --quiet --column -g=string"
        " --glob=string --iglob=string -t=string --type=string -T=string"
        " --type-not=string --type-list --hidden --no-ignore --no-ignore-vcs -u -uu -uuu"
        " -m=number --max-count=number -d=number --max-depth=number -a --text -z"
        " --search-zip -L --follow --color=string --json --stats --help --version"
        " --debug --files -P --pcre2 -U --multiline --multiline-dotall -x --line-regexp"
        " -M=number --max-columns=number --max-columns-preview --sort=string"
        " --sortr=string --trim -0 --null -r=string --replace=string --vimgrep"
        " --no-messages -s --case-sensitive -j=number --threads=number"
        " --max-filesize=string --passthru"
    ),
    ("sha256sum",): _CHECKSUM,
    ("sha1sum",): _CHECKSUM,
    ("md5sum",): _CHECKSUM,
    ("sha512sum",): _CHECKSUM,
    ("tree",): (
        "-a -d -l -f -x -L=number -P=string -I=string --gitignore --gitfile=string"
        " --ignore-case --matchdirs --metafirst --prune --info --infofile=string"
        " --noreport --charset=string --filelimit=number -q -N -Q -p -u -g -s -h --si"
        " --du -D --timefmt=string -F --inodes --device -v -t -c -U -r --dirsfirst"
        " --filesfirst --sort=string -i -A -S -n -C -X -J -H=string --nolinks"
        " --hintro=string --houtro=string -T=string --hyperlink --scheme=string"
        " --authority=string --fromfile --fromtabfile --fflinks --help --version"
    ),
    ("date",): (
        "-d=string --date=string -r=string --reference=string -u --utc --universal -I[=]"
        " --iso-8601[=] -R --rfc-email --rfc-3339=string --debug --help --version"
    ),
    ("hostname",): (
        "-f --fqdn --long -s --short -i --ip-address -I --all-ip-addresses -a --alias -d"
        " --domain -A --all-fqdns -v --verbose -h --help -V --version"
    ),
    ("info",): (
        "-f=string --file=string -d=string --directory=string -n=string --node=string -a"
        " --all -k=string --apropos=string -w --where --location --show-options"
        " --vi-keys --subnodes -h --help --usage --version"
    ),
    ("lsof",): (
        "-? -h -v -a -b -C -l -n -N -O -P -Q -R -t -U -V -X -H -E -F -g -i -K -L -o -r -s"
        " -S -T -x -A=string -c=string -d=string -e=string -k=string -p=string -u=string"
    ),
    ("pgrep",): (
        "-d=string --delimiter=string -l --list-name -a --list-full -v --inverse -w"
        " --lightweight -c --count -f --full -g=string --pgroup=string -G=string"
        " --group=string -i --ignore-case -n --newest -o --oldest -O=string --older=string"
        " -P=string --parent=string -s=string --session=string -t=string"
        " --terminal=string -u=string --euid=string -U=string --uid=string -x --exact"
        " -F=string --pidfile=string -L --logpidfile -r=string --runstates=string"
        " --ns=string --nslist=string --help -V --version"
    ),
    ("tput",): "-T=string -V -x",
    ("ss",): (
        "-h --help -V --version -n --numeric -r --resolve -a --all -l --listening -o"
        " --options -e --extended -m --memory -p --processes -i --info -s --summary -4"
        " --ipv4 -6 --ipv6 -0 --packet -t --tcp -M --mptcp -S --sctp -u --udp -d --dccp"
        " -w --raw -x --unix --tipc --vsock -f=string --family=string -A=string"
        " --query=string --socket=string -Z --context -z --contexts -b --bpf -E --events"
        " -H --no-header -O --oneline --tipcinfo --tos --cgroup --inet-sockopt"
    ),
    ("fd",): _FD,
    ("fdfind",): _FD,
    # No pyright (unlike Claude Code): it is a node script, so node's shim picks the
    # interpreter (see EXACT_READONLY), and its pip wrapper downloads pyright when first run.
    ("sed",): (
        "-n --quiet --silent -E -r --regexp-extended -z --zero-terminated --posix -s"
        " --separate -u --unbuffered --debug --sandbox -e=string --expression=string"
        " -l=number --line-length=number --help --version"
    ),
    ("uniq",): (
        "-c --count -d --repeated -D --all-repeated[=] -u --unique -i --ignore-case -z"
        " --zero-terminated -f=number --skip-fields=number -s=number --skip-chars=number"
        " -w=number --check-chars=number --group[=] --help --version"
    ),
    ("docker", "logs"): (
        "--follow -f --tail=string -n=string --timestamps -t --since=string --until=string"
        " --details"
    ),
    ("docker", "inspect"): "--format=string -f=string --type=string --size -s",
})

# Commands whose own option parsers are not getopt-like: no attached values.
_NO_ATTACHED = frozenset({("ps",), ("lsof",), ("tree",)})
_NO_DOUBLE_DASH = frozenset({("base64",)})


# Flags whose value may start with "-": sort keys (--sort=-date), search patterns.
_DASH_VALUES: Mapping[str, frozenset[str]] = MappingProxyType({
    "git": frozenset({"--sort"}),
    "grep": frozenset({"-e", "--regexp"}), "egrep": frozenset({"-e", "--regexp"}),
    "fgrep": frozenset({"-e", "--regexp"}), "rg": frozenset({"-e", "--regexp"}),
})


def _spec(key: tuple[str, ...], flags: str) -> FlagSpec:
    return FlagSpec(
        flags=_flags(flags),
        respects_double_dash=key not in _NO_DOUBLE_DASH,
        attached_values=key not in _NO_ATTACHED,
        numeric_shorthand=key[0] == "git",
        dash_values=_DASH_VALUES.get(key[0], frozenset()),
    )


FLAG_COMMANDS: Mapping[tuple[str, ...], FlagSpec] = MappingProxyType({
    key: _spec(key, flags) for key, flags in (*GIT_READONLY.items(), *OTHER_READONLY.items())
})

# Flags that are refused on purpose, with the reason shown to the user.
WRITE_FLAGS: Mapping[tuple[str, str], str] = MappingProxyType({
    ("sort", "-o"): "sort -o writes its output to a file",
    ("sort", "--output"): "sort --output writes its output to a file",
    ("sort", "-T"): "sort -T writes temporary files to a chosen directory",
    ("sort", "--compress-program"): "sort --compress-program runs a program",
    ("tree", "-o"): "tree -o writes its output to a file",
    ("tree", "--output"): "tree --output writes its output to a file",
    ("tree", "-R"): "tree -R writes HTML files",
    ("git", "--output"): "git --output writes to a file",
    ("rg", "--pre"): "rg --pre runs a preprocessor program",
    ("fd", "-x"): "fd -x runs a command per result",
    ("fd", "--exec"): "fd --exec runs a command per result",
    ("fd", "-X"): "fd -X runs a command on the results",
    ("fd", "--exec-batch"): "fd --exec-batch runs a command on the results",
    ("fdfind", "-x"): "fdfind -x runs a command per result",
    ("fdfind", "--exec"): "fdfind --exec runs a command per result",
    ("xargs", "-i"): "xargs -i is refused (optional-argument form)",
    ("xargs", "-e"): "xargs -e is refused (optional-argument form)",
    ("info", "-o"): "info -o writes to a file",
    ("info", "--output"): "info --output writes to a file",
    ("info", "--dribble"): "info --dribble writes keystrokes to a file",
    ("info", "--init-file"): "info --init-file loads key bindings from a file",
    ("ss", "-K"): "ss -K kills sockets",
    ("ss", "--kill"): "ss --kill kills sockets",
    ("ss", "-D"): "ss -D dumps to a file",
    ("ss", "--diag"): "ss --diag dumps to a file",
    ("ss", "-F"): "ss -F reads a filter file",
    ("ss", "-N"): "ss -N switches network namespace",
    ("ss", "--net"): "ss --net switches network namespace",
    ("man", "-P"): "man -P runs a chosen pager",
    ("man", "--pager"): "man --pager runs a chosen pager",
    ("man", "-H"): "man -H runs a browser",
    ("man", "-l"): "man -l formats a local file, whose .so requests read any other file",
    ("man", "--local-file"): "man --local-file formats a local file, whose .so requests read any other file",
    ("man", "--html"): "man --html runs a browser",
    ("sed", "-i"): "sed -i edits files in place",
    ("sed", "--in-place"): "sed --in-place edits files in place",
    ("sed", "-f"): "sed -f reads its script from a file (cannot be checked)",
    ("sed", "--file"): "sed --file reads its script from a file (cannot be checked)",
    ("git", "-c"): "git -c sets configuration (which can run programs)",
    ("git", "-C"): "git -C changes directory (bare repository attack)",
    ("git", "--exec-path"): "git --exec-path changes which programs git runs",
    ("git", "--git-dir"): "git --git-dir points git at another repository",
    ("git", "--work-tree"): "git --work-tree points git at another work tree",
    ("git", "--config-env"): "git --config-env sets configuration",
    ("git", "-p"): "git -p/--paginate runs a pager",
    ("git", "--paginate"): "git -p/--paginate runs a pager",
})

# --------------------------------------------------- commands checked by name only
# Any static arguments are fine: none of these can write files or run programs.
SIMPLE_READONLY = frozenset({
    "cal", "uptime", "cat", "head", "tail", "wc", "stat", "strings", "hexdump", "od", "nl",
    "id", "uname", "free", "df", "du", "locale", "groups", "nproc", "basename", "dirname",
    "realpath", "cut", "paste", "tr", "column", "tac", "rev", "fold", "expand", "unexpand",
    "fmt", "comm", "cmp", "numfmt", "readlink", "diff", "true", "false", "sleep", "which",
    "type", "expr", "test", "[", "getconf", "seq", "tsort", "pr", "ls", "echo",
})
# Two-word keys with any static arguments.
SIMPLE_READONLY_PAIRS = frozenset({("docker", "ps"), ("docker", "images")})

# Exact command lines that only print a version or help.
#
# Unlike Claude Code, no toolchain's version command is here (node -v, npm -v, python3
# --version, pip --version, cargo --version, rustc --version, go version, claude -h): the
# program that answers is often a version manager's shim, which picks the program to run
# from a file in the repository (rustup's rust-toolchain.toml can name any folder as a
# "path" toolchain, pyenv's .python-version, asdf's .tool-versions "path:", mise, volta's
# package.json key, corepack's packageManager), and go switches to the toolchain go.mod
# names (downloading it). So `cargo --version` could run a program the repository ships;
# claude is a node script, so it goes through node's shim too. They ask instead.
EXACT_READONLY = frozenset({
    ("pwd",), ("pwd", "-L"), ("pwd", "-P"), ("whoami",), ("alias",), ("history",),
    ("arch",), ("arch", "-h"), ("arch", "--help"), ("ip", "addr"), ("ip", "addr", "show"),
    ("ip", "a"), ("ifconfig",),
})

# find actions that write, delete or run commands.
FIND_ACTIONS: Mapping[str, str] = MappingProxyType({
    "-delete": "deletes files",
    "-exec": "runs a command",
    "-execdir": "runs a command",
    "-ok": "runs a command",
    "-okdir": "runs a command",
    "-fprint": "writes to a file",
    "-fprint0": "writes to a file",
    "-fprintf": "writes to a file",
    "-fls": "writes to a file",
})

# Commands xargs may run: their flags cannot write even if stdin injects some.
XARGS_TARGETS = frozenset({
    "echo", "printf", "wc", "grep", "egrep", "fgrep", "head", "tail", "cat", "ls",
    "stat", "basename", "dirname", "du",
})

# jq options that load code or data from files (short ones also inside a bundle: -nf).
JQ_FILE_OPTIONS = frozenset({
    "-f", "--from-file", "--rawfile", "--slurpfile", "--run-tests", "-L", "--library-path",
})
# jq filter words that load files (modules: import "x" reads x.jq or x.json) or expose
# the environment and the file system's layout.
JQ_FILE_WORDS = frozenset({"import", "include", "modulemeta", "get_search_list"})
JQ_ENV_WORDS = ("env", "$ENV", "input_filename", "$__prog_args", "$__loc__", "get_prog_origin",
                "get_jq_origin")

# tput capabilities that reset or take over the terminal.
TPUT_DANGEROUS = frozenset({
    "init", "reset", "rs1", "rs2", "rs3", "is1", "is2", "is3", "iprog", "if", "rf",
    "clear", "flash", "mc0", "mc4", "mc5", "mc5i", "mc5p", "pfkey", "pfloc", "pfx",
    "pfxl", "smcup", "rmcup",
})

# Commands that run other commands (the program table's runs column): named so the reason says why.
COMMAND_RUNNERS = frozenset(name for name, row in PROGRAMS.items() if row.runs is not None)

# Redirection targets that discard or echo output.
SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
# File descriptors a `>&N` / `<&N` duplication may name.
SAFE_FDS = frozenset({"0", "1", "2", "-"})

# Shell structure the read-only check accepts (every command inside is still checked).
READONLY_CONSTRUCTS = frozenset({"subshell", "group", "negation", "if"})
# How to name the rest in a verdict.
CONSTRUCT_LABELS: Mapping[str, str] = MappingProxyType({
    "function": "function definition",
    "background": "background job",
    "for": "for loop",
    "while": "while loop",
    "until": "until loop",
    "select": "select loop",
    "case": "case statement",
    "arithmetic": "arithmetic command",
    "declaration": "declaration (export/declare/local/readonly)",
    "unset": "unset",
    "assignment": "variable assignment",
    "unsupported": "unsupported syntax",
})

# Input redirections that open network connections instead of files.
NETWORK_PATHS = ("/dev/tcp/", "/dev/udp/")

# Trusted directories for absolute command paths (/usr/bin/grep is grep).
SYSTEM_BIN_DIRS = ("/bin/", "/usr/bin/")

# ------------------------------------------------------------ [[ ]] arithmetic
# These compare integers and evaluate a non-numeric operand as arithmetic, which can
# run commands through array subscripts.
ARITHMETIC_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})

# ----------------------------------------------------------------- exit codes
# Exit codes that report a result rather than a failure.
BENIGN_EXIT_CODES: Mapping[str, frozenset[int]] = MappingProxyType({
    "grep": frozenset({1}), "egrep": frozenset({1}), "fgrep": frozenset({1}),
    "rg": frozenset({1}), "find": frozenset({1}), "diff": frozenset({1}), "cmp": frozenset({1}),
    "test": frozenset({1}), "[": frozenset({1}), "[[": frozenset({1}),
})

# ------------------------------------------------ permission-matching helpers
# Env vars stripped before matching allow rules (reference §4.1).
SAFE_ENV_VARS = frozenset({
    "GOEXPERIMENT", "GOOS", "GOARCH", "CGO_ENABLED", "GO111MODULE", "RUST_BACKTRACE",
    "RUST_LOG", "NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_DEBUG", "ANTHROPIC_API_KEY", "LANG",
    "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_TIME", "CHARSET", "TERM", "COLORTERM",
    "NO_COLOR", "FORCE_COLOR", "TZ", "LS_COLORS", "LSCOLORS", "GREP_COLOR", "GREP_COLORS",
    "GCC_COLORS", "TIME_STYLE", "BLOCK_SIZE", "BLOCKSIZE",
})
SAFE_ENV_VALUE = re.compile(r"[A-Za-z0-9_./:-]+")

# Wrappers that run the rest of the line as a command, each with the options it may
# carry for an allow rule to see past it (option -> takes a value): the program table's
# allow_peel column.
WRAPPER_OPTIONS: Mapping[str, Mapping[str, bool]] = allow_peeled_options()
# sed script commands that only print or edit the stream (no files, no programs).
SED_STREAM_COMMANDS = frozenset("pdDqQ=lnNPgGhHxzF")
SED_S_FLAGS = frozenset("gpiImM0123456789")
# sed commands refused, with the reason.
SED_REFUSED: Mapping[str, str] = MappingProxyType({
    "w": "writes a file", "W": "writes a file", "e": "runs a command",
    "r": "reads a file into the output", "R": "reads a file into the output",
    "a": "text commands are not analysed", "i": "text commands are not analysed",
    "c": "text commands are not analysed", ":": "labels are not analysed",
    "b": "branches are not analysed", "t": "branches are not analysed",
    "T": "branches are not analysed", "v": "is not analysed", "#": "comments are not analysed",
})

# The wrappers that cannot write by themselves (nohup may create nohup.out).
READONLY_WRAPPERS = frozenset({"time", "timeout", "nice", "stdbuf"})
TIMEOUT_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?")
