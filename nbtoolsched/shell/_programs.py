"""The program table: what the shell layer knows about a program, one row per program.

A row says how a program's command line reads: which options take a value (attached,
``-t.git``, ``--target-directory=.git``, or as the next word), whether options may follow
the operands (GNU getopt permutes them), which options move the folder it works in
(``env -C``, ``git -C``, ``tar -C``), name its destination (``cp -t``) or a new root
(``sudo -R``), make links, run code or hide the command it runs; what the names it is
given are (files it reads, files it changes); and how a runner's command is found
(``timeout 5 rm``, ``xargs rm``, ``find -exec rm``, ``sh -c 'rm'``).

Logic never names an option of a program: it reads the row (``program("cp")``) and the
one option reader, ``read_args``. A program without a row gets an empty one (no option
known to take a value: its words are all names), so the analyses stay conservative.

The read-only allowlist (``_allowlists``: the options Claude Code deems harmless for each
read-only command) is a different table on purpose: it lists what is safe, not what a
command line means.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Iterable, Literal, Mapping, Sequence

__all__ = ["Program", "PROGRAMS", "Reading", "program", "read_args", "option_names", "allow_peeled_options"]

Paths = Literal["read", "create", "write"]
Reads = Literal["nothing", "files", "may descend"]
# How a runner finds the command it runs (None: it runs none). "after options": the
# words after its options; "after assignments": and after NAME=value words (env, sudo);
# "after a duration" (timeout); "input appended" (xargs); "exec clauses" (find -exec ...
# ;); "next word" (builtin, busybox); "code string" (sh -c); "eval", "trap", "mapfile"
# (code in a string); "renames" (alias), "hash" (hash -p); "unseen": it runs a command
# the rules cannot see (ssh, watch, flock...).
Runs = Literal["after options", "after assignments", "after a duration", "input appended", "exec clauses", "next word",
               "code string", "eval", "trap", "mapfile", "renames", "hash", "unseen"]


@dataclass(frozen=True, slots=True)
class Program:
    """One program, as data. Every column has a safe default for a program without a row."""

    name: str
    # Every option the program knows: True if it takes a value (attached or the next word).
    # Long options may be abbreviated to any unambiguous prefix unless ``abbreviations`` is off.
    options: Mapping[str, bool] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()  # options whose value is optional, attached only (-i[R], --replace[=R])
    hides_command: Mapping[str, str] = field(default_factory=dict)  # options after which what it runs cannot be told, why
    prints_only: frozenset[str] = frozenset()  # options with which a runner runs nothing (command -v)
    numeric_option: str | None = None  # nice -10 is nice -n 10
    abbreviations: bool = True  # getopt_long takes prefixes; git's own options do not
    bundles: bool = True  # -abc is -a -b -c
    permutes: bool = False  # options may follow the operands (GNU getopt): every word is read
    old_style_letters: bool = False  # the first word may be option letters without a dash (tar xzf a.tgz)
    chdir: frozenset[str] = frozenset()  # options whose value is the folder it works in
    new_root: frozenset[str] = frozenset()  # options whose value is a new root: no name can be judged from here
    split_string: frozenset[str] = frozenset()  # options whose value is split into more words (env -S)
    target_dir: frozenset[str] = frozenset()  # options whose value is the destination folder (cp -t)
    writes: Literal["destination", "operands"] | None = None  # what its names change: the last operand (or -t), or all
    makes_links: frozenset[str] = frozenset()  # options with which it makes links (cp -s, -l)
    copies_links: frozenset[str] = frozenset()  # options with which it copies links as links (cp -a, -P, -d, -r)
    always_links: bool = False  # it makes links whatever its options (ln, link)
    moves_files: bool = False  # it moves files, links among them, that exist already (mv, rename)
    copies_links_always: bool = False  # it may copy links as links whatever its options (rsync)
    code_options: frozenset[str] = frozenset()  # options whose value is a shell line it runs later (git rebase --exec)
    config_options: frozenset[str] = frozenset()  # options whose value sets its configuration, key=value (git -c)
    code_words: frozenset[str] = frozenset()  # words after which the rest is a line it runs (git submodule foreach)
    unknown_writes: Mapping[str, str] = field(default_factory=dict)  # options after which what it writes cannot be told
    paths: Paths | None = None  # the names it is given: files it reads, creates, or changes
    pattern_first: bool = False  # its first operand is a pattern or script, not a path (grep, rg, sed)
    options_ask: bool = False  # with any option its paths need a person (Claude Code's pathValidation: mv, cp)
    default_operand: str | None = None  # what it works on when no name is given (ls: ".", cd: "~")
    reads: Reads = "may descend"  # what it reads through its names: nothing, the files, or folders' content
    recursive: frozenset[str] = frozenset()  # options with which it reads folders' content after all (grep -r, ls -R)
    expression_after_operands: bool = False  # its operands come first, then an expression of options (find)
    tree_by_default: bool = False  # it reads the working tree when no folder is named (rg, find)
    input_is_data: bool = False  # its input is data, never names or code (cat, grep)
    runs: Runs | None = None
    exec_actions: frozenset[str] = frozenset()  # find -exec and kin: the command up to ";" or "+"
    runs_in_found_folder: frozenset[str] = frozenset()  # find -execdir: in the folder of each file found
    allow_peel: frozenset[str] | None = None  # options with which an allow rule may see past it (Claude Code's list)


@dataclass(frozen=True, slots=True)
class Reading:
    """A program's words read through its row."""

    operands: tuple[str, ...]
    values: tuple[tuple[str, str], ...]  # (option as the row names it, its value), in order
    flags: frozenset[str]  # every option given, as the row names it (unknown ones as written)
    end: int  # the index after its options (where a runner's command starts)
    problem: str | None = None  # why the words cannot all be read (a computed word, an option that hides the command)

    def values_of(self, options: Iterable[str]) -> list[str]:
        wanted = frozenset(options)
        return [value for option, value in self.values if option in wanted]

    def uses(self, options: Iterable[str]) -> bool:
        return not self.flags.isdisjoint(options)


def read_args(row: Program, args: Sequence[str | None], *, first: int = 0, strict: bool = False) -> Reading:
    """Read ``args[first:]`` with ``row``: getopt_long as GNU tools do (a long option is
    its name or an unambiguous prefix, ``--name=value`` or ``--name value``; short ones
    bundle, a value attached or the next word; ``--`` ends the options). A program that
    permutes reads options among and after its operands; another stops at its first
    operand. A word the shell computes (None) stops the reading with a problem. With
    ``strict`` an unknown option, or one after which what a runner runs cannot be told,
    stops it too (a runner's own options must all be read to find its command); else an
    unknown option counts as a flag without a value."""
    operands: list[str] = []
    values: list[tuple[str, str]] = []
    flags: set[str] = set()
    i = first

    def stop(why: str) -> Reading:
        return Reading(tuple(operands), tuple(values), frozenset(flags), i, why)

    while i < len(args):
        word = args[i]
        if word is None:
            return stop(f"{row.name} has a word the shell computes among its options")
        if word == "--":
            i += 1
            operands.extend(w for w in args[i:] if w is not None)
            if None in args[i:]:
                return Reading(tuple(operands), tuple(values), frozenset(flags), i, f"{row.name} has a word the shell computes")
            return Reading(tuple(operands), tuple(values), frozenset(flags), i)
        if not word.startswith("-") or word == "-":
            if not row.permutes:
                break
            operands.append(word)
            i += 1
            continue
        i += 1
        if word.startswith("--"):
            flag, eq, value = word.partition("=")
            name = _resolve_long(row, flag)
            if name is None:
                if strict:
                    i -= 1
                    return stop(f"{row.name} option {flag} is unknown or ambiguous")
                flags.add(flag)
                continue
            if strict and name in row.hides_command:
                i -= 1
                return stop(row.hides_command[name])
            flags.add(name)
            if row.options[name] and not eq:
                if i >= len(args) or args[i] is None:
                    return stop(f"{row.name} option {flag} has no readable value")
                value, i = str(args[i]), i + 1
            if eq or row.options[name]:
                values.append((name, value))
            continue
        if row.numeric_option and word[1:].isdigit():
            flags.add(row.numeric_option)
            values.append((row.numeric_option, word[1:]))
            continue
        letters = word[1:] if row.bundles else word[1:2] if len(word) == 2 else None
        if letters is None:  # -abc where the program takes no bundles: one unknown option
            if strict:
                i -= 1
                return stop(f"{row.name} option {word} is unknown")
            flags.add(word)
            continue
        j = 0
        while j < len(letters):
            flag = "-" + letters[j]
            if flag not in row.options:
                if strict:
                    i -= 1
                    return stop(f"{row.name} option {flag} is unknown")
                flags.add(flag)
                j += 1
                continue
            if strict and flag in row.hides_command:
                i -= 1
                return stop(row.hides_command[flag])
            flags.add(flag)
            rest = letters[j + 1:]
            if row.options[flag] or flag in row.optional:
                if rest or not row.options[flag]:
                    if rest:
                        values.append((flag, rest))
                elif i < len(args) and args[i] is not None:
                    values.append((flag, str(args[i])))
                    i += 1
                else:
                    return stop(f"{row.name} option {flag} has no readable value")
                break
            j += 1
    return Reading(tuple(operands), tuple(values), frozenset(flags), i)


def _resolve_long(row: Program, flag: str) -> str | None:
    """getopt_long: the exact name, or a prefix of exactly one (None: unknown or ambiguous)."""
    if flag in row.options:
        return flag
    if not row.abbreviations or len(flag) <= 2:
        return None
    matches = [name for name in row.options if name.startswith("--") and name.startswith(flag)]
    return matches[0] if len(matches) == 1 else None


def _opts(flags: str = "", valued: str = "") -> dict[str, bool]:
    """Options from two blank-separated lists: those without a value, those with one."""
    return {**dict.fromkeys(flags.split(), False), **dict.fromkeys(valued.split(), True)}


_SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh")
_UNSEEN_RUNNERS = ("source", ".", "fish", "csh", "tcsh", "su", "watch", "parallel", "coproc", "chroot", "unshare",
                   "nsenter", "script", "ssh", "runuser", "flock", "chrt", "taskset", "unbuffer", "fakeroot", "firejail",
                   "strace", "ltrace", "systemd-run", "dbus-run-session", "xvfb-run", "entr")
_COPY_VALUED = "-S --suffix -t --target-directory"
_COPY_COMMON = "-b --backup -f --force -i --interactive -T --no-target-directory -v --verbose --help --version --debug"

_ROWS: tuple[Program, ...] = (
    # ------------------------------------------------------------------ runners
    Program("env", _opts("-i --ignore-environment -0 --null -v --debug --block-signal --default-signal --ignore-signal "
                         "--list-signal-handling --help --version", "-u --unset -C --chdir -S --split-string"),
            optional=frozenset({"--block-signal", "--default-signal", "--ignore-signal"}),
            hides_command={"-S": "env -S splits a string into a command", "--split-string": "env -S splits a string into a command"},
            runs="after assignments", chdir=frozenset({"-C", "--chdir"}), split_string=frozenset({"-S", "--split-string"})),
    Program("sudo", _opts("-A --askpass -b --background -B --bell -E --preserve-env -e --edit -H --set-home -i --login -K "
                          "--remove-timestamp -k --reset-timestamp -l --list -n --non-interactive -P --preserve-groups "
                          "-S --stdin -s --shell -V --version -v --validate --help",
                          "-C --close-from -D --chdir -g --group -h --host -p --prompt -R --chroot -r --role -t --type "
                          "-T --command-timeout -U --other-user -u --user"),
            optional=frozenset({"--preserve-env"}),
            hides_command={"-e": "sudo -e edits files", "--edit": "sudo -e edits files"},
            runs="after assignments", chdir=frozenset({"-D", "--chdir"}), new_root=frozenset({"-R", "--chroot"})),
    Program("doas", _opts("-n -s -L", "-u -C"), runs="after options"),
    Program("timeout", _opts("--preserve-status --foreground -v --verbose --help --version", "-k --kill-after -s --signal"),
            runs="after a duration",
            allow_peel=frozenset({"-k", "--kill-after", "-s", "--signal", "--preserve-status", "--foreground", "-v", "--verbose"})),
    Program("nice", _opts("--help --version", "-n --adjustment"), numeric_option="-n", runs="after options",
            allow_peel=frozenset({"-n", "--adjustment"})),
    Program("stdbuf", _opts("--help --version", "-i --input -o --output -e --error"), runs="after options",
            allow_peel=frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    Program("time", _opts("-p --portability -a --append -v --verbose -q --quiet --help --version", "-f --format -o --output"),
            runs="after options", allow_peel=frozenset({"-p"})),
    Program("nohup", _opts("--help --version"), runs="after options", allow_peel=frozenset()),
    Program("exec", _opts("-c -l", "-a"), runs="after options"),
    Program("command", _opts("-p -v -V"), prints_only=frozenset({"-v", "-V"}), runs="after options"),
    Program("setsid", _opts("-c --ctty -f --fork -w --wait --help --version"), runs="after options"),
    Program("ionice", _opts("-t --ignore --help --version -p --pid -P --pgid -u --uid", "-c --class -n --classdata"),
            hides_command={"-p": "ionice -p changes other processes", "--pid": "ionice -p changes other processes",
                           "-P": "ionice -P changes other processes", "--pgid": "ionice -P changes other processes",
                           "-u": "ionice -u changes other processes", "--uid": "ionice -u changes other processes"},
            runs="after options"),
    Program("xargs", _opts("-0 --null --eof -e --replace -i --max-lines -l -p --interactive -r --no-run-if-empty "
                           "--show-limits -t --verbose -x --exit -o --open-tty --help --version",
                           "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs --process-slot-var -s --max-chars"),
            optional=frozenset({"-e", "-i", "-l", "--eof", "--replace", "--max-lines"}), runs="input appended"),
    Program("find", runs="exec clauses", exec_actions=frozenset({"-exec", "-execdir", "-ok", "-okdir"}),
            runs_in_found_folder=frozenset({"-execdir", "-okdir"}), paths="read", default_operand=".", tree_by_default=True,
            expression_after_operands=True),
    Program("builtin", runs="next word"),
    Program("busybox", runs="next word"),
    Program("toybox", runs="next word"),
    Program("eval", runs="eval"),
    Program("trap", runs="trap"),
    Program("mapfile", _opts("-t", "-d -n -O -s -u -C -c"), runs="mapfile"),
    Program("readarray", _opts("-t", "-d -n -O -s -u -C -c"), runs="mapfile"),
    Program("alias", runs="renames"),
    Program("hash", runs="hash"),
    *(Program(shell, _opts(valued="-o +o -O +O --rcfile --init-file"), runs="code string") for shell in _SHELLS),
    *(Program(name, runs="unseen") for name in _UNSEEN_RUNNERS),
    # ------------------------------------------------- programs that copy, link and move
    Program("cp", _opts(f"{_COPY_COMMON} -a --archive --attributes-only --copy-contents -d -H -l --link -L --dereference "
                        "-n --no-clobber -P --no-dereference -p --parents -R -r --recursive --remove-destination "
                        "--strip-trailing-slashes -s --symbolic-link -u -x --one-file-system -Z --keep-directory-symlink "
                        "--exchange",
                        f"{_COPY_VALUED} --no-preserve --sparse"),
            optional=frozenset({"--backup", "--preserve", "--reflink", "--update", "--context"}), permutes=True,
            target_dir=frozenset({"-t", "--target-directory"}), writes="destination", paths="write",
            makes_links=frozenset({"-s", "-l", "--symbolic-link", "--link"}),
            copies_links=frozenset({"-a", "-P", "-d", "-r", "-R", "--archive", "--no-dereference", "--recursive"})),
    Program("install", _opts(f"{_COPY_COMMON} -c -C --compare -d --directory -D -p --preserve-timestamps -s --strip "
                             "--preserve-context -Z",
                             f"{_COPY_VALUED} -g --group -m --mode -o --owner --strip-program"),
            optional=frozenset({"--backup", "--context"}), permutes=True, target_dir=frozenset({"-t", "--target-directory"}),
            writes="destination", paths="write"),
    Program("ln", _opts(f"{_COPY_COMMON} -d -F --directory -L --logical -n --no-dereference -P --physical -r --relative "
                        "-s --symbolic", _COPY_VALUED),
            optional=frozenset({"--backup"}), permutes=True, target_dir=frozenset({"-t", "--target-directory"}),
            writes="destination", paths="write", always_links=True),
    Program("link", always_links=True, writes="operands"),
    Program("mv", _opts(f"{_COPY_COMMON} --exchange -n --no-clobber --no-copy --strip-trailing-slashes -u -Z --context",
                        _COPY_VALUED),
            optional=frozenset({"--backup", "--update"}), permutes=True, writes="operands", paths="write", moves_files=True),
    Program("rename", moves_files=True, writes="operands"),
    Program("rsync", copies_links_always=True),
    # ------------------------------------------------------------ programs told where to work
    Program("tar", _opts(valued="-f --file -C --directory -b --blocking-factor -T --files-from -X --exclude-from -K "
                               "--starting-file -N --newer --after-date -V --label -g --listed-incremental -H --format "
                               "-I --use-compress-program -L --tape-length -F --info-script --new-volume-script "
                               "--record-size --newer-mtime --volno-file --group --owner --mode --mtime --suffix "
                               "--rsh-command --rmt-command --to-command --exclude --transform --xform --index-file "
                               "--checkpoint-action --strip-components --sort --warning --owner-map --group-map "
                               "--pax-option --quoting-style --hole-detection --level"),
            optional=frozenset({"--backup", "--checkpoint", "--occurrence", "--one-top-level"}), permutes=True,
            old_style_letters=True, chdir=frozenset({"-C", "--directory"}),
            unknown_writes={o: "tar renames what it extracts by a pattern, so which files it writes cannot be told"
                            for o in ("--transform", "--xform")}),
    # git's own options, before its subcommand (git.c reads them: no abbreviations, no bundles).
    Program("git", _opts("-v --version -h --help -p --paginate -P --no-pager --bare --no-replace-objects --no-lazy-fetch "
                         "--no-optional-locks --no-advice --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
                         "--icase-pathspecs --html-path --man-path --info-path",
                         "-C -c --git-dir --work-tree --namespace --config-env --attr-source --super-prefix"),
            optional=frozenset({"--exec-path", "--list-cmds"}), abbreviations=False, bundles=False,
            chdir=frozenset({"-C"}), config_options=frozenset({"-c"}), code_words=frozenset({"foreach"}),
            # rebase -x/--exec, fetch/clone -u/--upload-pack, push --receive-pack (every -x and -u counts:
            # in cherry-pick -x a flag, and the next word a commit, which names no config)
            code_options=frozenset({"--exec", "--upload-pack", "--receive-pack", "-x", "-u"})),
    Program("ls", _opts("-a --all -A --almost-all --author -b --escape -B --ignore-backups -c -C -d --directory -D --dired "
                        "-f -F -g --group-directories-first -G --no-group -h --human-readable --si -H "
                        "--dereference-command-line --dereference-command-line-symlink-to-dir -i --inode -k --kibibytes "
                        "-l -L --dereference -m -n --numeric-uid-gid -N --literal -o -p -q --hide-control-chars "
                        "--show-control-chars -Q --quote-name -r --reverse -R --recursive -s --size -S -t -u -U -v -x -X "
                        "-Z --context --zero -1 --help --version",
                        "-I --ignore -w --width -T --tabsize --block-size --format --hide --quoting-style --sort "
                        "--time --time-style --indicator-style"),
            optional=frozenset({"--color", "--hyperlink", "--classify", "--file-type"}), permutes=True),
    Program("make", _opts(valued="-C --directory -f --file --makefile -I --include-dir -o --old-file -W --what-if"),
            chdir=frozenset({"-C", "--directory"})),
)

# Columns shared by groups of programs, merged into their rows (a program is one row).
_GROUPS: tuple[tuple[str, dict[str, object]], ...] = (
    ("cd ls cat head tail sort uniq wc cut paste column file stat diff strings hexdump od base64 nl sha256sum sha1sum "
     "md5sum grep rg", {"paths": "read"}),
    ("mkdir touch", {"paths": "create"}),
    ("mv cp", {"options_ask": True}),
    ("rm rmdir sed tee truncate chmod chown chgrp shred", {"paths": "write"}),
    ("rm rmdir mkdir touch tee truncate chmod chown chgrp shred sed", {"writes": "operands"}),
    ("grep egrep fgrep rg sed", {"pattern_first": True}),
    ("ls grep rg", {"default_operand": "."}),
    ("cd", {"default_operand": "~"}),
    ("echo printf basename dirname true false pwd sleep seq rm rmdir mkdir touch which type test [", {"reads": "nothing"}),
    ("cd cat head tail wc nl tac rev sort uniq cut paste column fold fmt expand unexpand strings od hexdump xxd base64 "
     "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum cmp comm tr stat file readlink realpath "
     "less more sed awk jq yq", {"reads": "files", "input_is_data": True}),
    ("grep egrep fgrep", {"reads": "files", "input_is_data": True,
                          "recursive": frozenset({"-r", "-R", "-d", "--recursive", "--dereference-recursive", "--directories"})}),
    ("ls", {"reads": "files", "recursive": frozenset({"-R", "--recursive"})}),
    ("ag ack fd fdfind", {"pattern_first": True}),
    ("tee", {"input_is_data": True}),
    ("rg ag ack fd fdfind find tree du", {"tree_by_default": True}),
)


def _build() -> Mapping[str, Program]:
    rows: dict[str, Program] = {}
    for row in _ROWS:
        if row.name in rows:
            raise ValueError(f"the program table has two rows for {row.name}")
        # An option whose value is optional is an option too (taking no value as the next word).
        rows[row.name] = replace(row, options={**dict.fromkeys(row.optional, False), **row.options})
    for names, columns in _GROUPS:
        for name in names.split():
            rows[name] = replace(rows.get(name) or Program(name), **columns)  # type: ignore[arg-type]
    return MappingProxyType(rows)


PROGRAMS: Mapping[str, Program] = _build()


def program(name: str | None) -> Program:
    """The row of the program a command word names (by its last path part); an empty row
    for a program the table does not know, or a name the shell computes (None)."""
    if not name:
        return Program("")
    base = os.path.basename(name.rstrip("/")) or name
    return PROGRAMS.get(base) or Program(base)


def option_names(column: str) -> frozenset[str]:
    """Every option any row lists in ``column`` (``chdir``: -C, --chdir, --directory...)."""
    found: set[str] = set()
    for row in PROGRAMS.values():
        found.update(getattr(row, column))
    return frozenset(found)


def allow_peeled_options() -> Mapping[str, Mapping[str, bool]]:
    """The runners an allow rule sees past, each with the options it may carry then."""
    return MappingProxyType({row.name: MappingProxyType({o: row.options[o] for o in sorted(row.allow_peel)})
                             for row in PROGRAMS.values() if row.allow_peel is not None})
