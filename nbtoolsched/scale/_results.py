"""Results as they come: a summary kept as they arrive, and a run directory that holds them.

A run of a million sessions cannot keep a million results in the driver (a replay's
result is tens of KiB in memory). What it keeps instead:

* ``RunSummary``: counts and sums folded in one result at a time (sessions by status,
  calls by outcome and tool, the rules that decided them, batches, tool time, agent
  sessions' stop reasons and call statuses, the first failures). Its size depends on the
  number of tools, statuses and rules, never on the number of sessions;
* a run directory (``run_sessions(..., run_dir=...)``): ``results.jsonl`` gets one line per
  finished session as it finishes (written and flushed before the next one is read), so
  an interrupted run loses nothing it finished; run again with the same ``run_dir`` and
  the same tasks, the finished sessions are skipped and the summary is read back from the
  file. ``artifacts/`` holds what agent sessions brought back (``AgentTask(artifacts=True)``),
  and ``results.parquet`` a flat table of the sessions (one row each), written from the
  JSONL at the end of a run where pyarrow is installed (Ray Data brings it), for
  ``ray.data.read_parquet``, pandas or DuckDB.

``result_to_json`` and ``result_from_json`` turn a ``SessionResult`` into one JSON object
and back (the value is a ``SessionReplay`` or an ``AgentSummary``, rebuilt as it was).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .._errors import ConfigurationError
from ._agents import AgentSummary, SessionArtifacts
from ._replay import CallDecision, RerunSummary, SessionReplay
from ._work import SessionResult

__all__ = ["RunSummary", "RunDirectory", "result_to_json", "result_from_json", "session_row"]

MAX_FAILURES = 20  # failures the summary names (it counts them all)
RESULTS = "results.jsonl"
RUN = "run.json"


# -- one result as JSON ------------------------------------------------------------------------------
def _kind(value: object) -> str | None:
    if isinstance(value, SessionReplay):
        return "replay"
    if isinstance(value, AgentSummary):
        return "agent"
    return None


def _plain(value: Any) -> Any:
    """A dataclass value as JSON-able data (bytes are not: artifacts are written apart)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return None
    return value


def result_to_json(result: "SessionResult") -> dict[str, Any]:
    data = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.name != "value"}
    value = result.value
    data["kind"] = _kind(value)
    plain = _plain(value) if value is not None else None
    if isinstance(value, AgentSummary) and plain is not None and value.artifacts is not None:
        plain["artifacts"] = {"folder": value.artifacts.folder, "files": sorted(value.artifacts.files),
                              "deleted": list(value.artifacts.deleted), "skipped": list(value.artifacts.skipped),
                              "transcript": value.artifacts.transcript is not None}
    data["value"] = plain
    return data


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _replay_from(data: dict[str, Any]) -> SessionReplay:
    values = _known(SessionReplay, data)
    values["calls"] = [CallDecision(**_known(CallDecision, c)) for c in values.get("calls", [])]
    rerun = values.get("rerun")
    if rerun is not None:
        rerun = _known(RerunSummary, rerun)
        rerun["details"] = tuple(tuple(d) for d in rerun.get("details", ()))
        values["rerun"] = RerunSummary(**rerun)
    return SessionReplay(**values)


def _agent_from(data: dict[str, Any]) -> AgentSummary:
    values = _known(AgentSummary, data)
    values["calls"] = tuple(tuple(c) for c in values.get("calls", ()))
    found = values.get("artifacts")
    if found is not None:
        folder = found.get("folder")
        files: dict[str, bytes] = {}
        transcript = None
        if folder and Path(folder).is_dir():  # read back from where the driver wrote them
            base = Path(folder)
            files = {name: (base / "files" / name).read_bytes() for name in found.get("files", []) if (base / "files" / name).is_file()}
            if (base / "transcript.jsonl").is_file():
                transcript = (base / "transcript.jsonl").read_text(encoding="utf-8")
        values["artifacts"] = SessionArtifacts(transcript, files, tuple(found.get("deleted", ())), tuple(found.get("skipped", ())), folder)
    return AgentSummary(**values)


def result_from_json(data: dict[str, Any]) -> SessionResult:
    values = _known(SessionResult, data)
    raw = data.get("value")
    kind = data.get("kind")
    values["value"] = _replay_from(raw) if kind == "replay" and raw else _agent_from(raw) if kind == "agent" and raw else None
    return SessionResult(**values)


# The Parquet table's columns: one row per session, its result and its value's counts.
ROW_TYPES: dict[str, type] = {
    "index": int, "name": str, "status": str, "error": str, "seconds": float, "worker": str, "attempts": int, "kind": str,
    "replay_status": str, "path": str, "calls": int, "allow": int, "prompt": int, "deny": int, "batches": int,
    "parallel_batches": int, "serial_s": float, "simulated_s": float, "stop_reason": str, "turns": int,
}


def session_row(data: dict[str, Any]) -> dict[str, Any]:
    """One session (a ``result_to_json`` object) as a flat row of ``ROW_TYPES``."""
    row: dict[str, Any] = {name: kind() for name, kind in ROW_TYPES.items()}
    for name in ("index", "name", "status", "seconds", "worker", "attempts", "kind"):
        if data.get(name) is not None:
            row[name] = data[name]
    row["error"] = data.get("error") or ""
    value = data.get("value") or {}
    if data.get("kind") == "replay":
        outcomes = Counter(c.get("outcome") for c in value.get("calls", ()))
        row.update(replay_status=value.get("status", ""), path=value.get("path", ""), calls=len(value.get("calls", ())),
                   allow=outcomes["allow"], prompt=outcomes["prompt"], deny=outcomes["deny"],
                   batches=value.get("batches", 0), parallel_batches=value.get("parallel_batches", 0),
                   serial_s=float(value.get("serial_s", 0.0)), simulated_s=float(value.get("simulated_s", 0.0)))
    elif data.get("kind") == "agent":
        row.update(calls=len(value.get("calls", ())), prompt=value.get("prompts", 0), stop_reason=value.get("stop_reason", ""),
                   turns=value.get("turns", 0))
    return row


# -- the summary ---------------------------------------------------------------------------------------
@dataclass
class RunSummary:
    """A run summed up one result at a time: its size does not grow with the number of sessions.

    ``statuses`` counts results (ok, failed, cancelled); for replays ``replays`` counts their
    own statuses (ok, partial, empty, unreadable), ``outcomes`` the calls' outcomes (allow,
    prompt, deny), ``tools`` each tool's outcomes, ``rules`` what decided each call, and the
    sums are tool time in seconds as ``SessionReplay`` has them; for agent sessions
    ``stop_reasons`` and ``agent_calls`` (each call's status). ``failures`` names the first
    ``MAX_FAILURES`` sessions that failed (``statuses["failed"]`` counts them all)."""

    sessions: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    replays: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    tools: dict[str, Counter[str]] = field(default_factory=dict)
    rules: Counter[str] = field(default_factory=Counter)
    batches: int = 0
    parallel_batches: int = 0
    observed_s: float = 0.0
    serial_s: float = 0.0
    simulated_s: float = 0.0
    estimated_s: float = 0.0
    denied_s: float = 0.0
    prompt_s: float = 0.0
    stop_reasons: Counter[str] = field(default_factory=Counter)
    agent_calls: Counter[str] = field(default_factory=Counter)
    prompts: int = 0  # agent sessions: calls a person would have been asked about
    worker_seconds: float = 0.0  # the sessions' own times, summed
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def saved_s(self) -> float:
        """Tool time saved by running calls in parallel (replays)."""
        return self.serial_s - self.simulated_s

    @property
    def ok(self) -> int:
        return self.statuses["ok"]

    @property
    def failed(self) -> int:
        return self.statuses["failed"]

    @property
    def cancelled(self) -> int:
        return self.statuses["cancelled"]

    def add(self, result: "SessionResult") -> None:
        self.sessions += 1
        self.statuses[result.status] += 1
        self.worker_seconds += result.seconds
        if result.status == "failed" and len(self.failures) < MAX_FAILURES:
            self.failures.append((result.name, result.error or "failed"))
        value = result.value
        if isinstance(value, SessionReplay):
            self.replays[value.status] += 1
            self.calls += len(value.calls)
            for call in value.calls:
                self.outcomes[call.outcome] += 1
                self.tools.setdefault(call.tool, Counter())[call.outcome] += 1
                self.rules[call.decided_by] += 1
            self.batches += value.batches
            self.parallel_batches += value.parallel_batches
            self.observed_s += value.observed_s
            self.serial_s += value.serial_s
            self.simulated_s += value.simulated_s
            self.estimated_s += value.estimated_s
            self.denied_s += value.denied_s
            self.prompt_s += value.prompt_s
        elif isinstance(value, AgentSummary):
            self.stop_reasons[value.stop_reason] += 1
            self.agent_calls.update(status for _, status in value.calls)
            self.prompts += value.prompts

    def __str__(self) -> str:
        parts = [f"{self.sessions:,} sessions: {self.ok:,} ok, {self.failed:,} failed, {self.cancelled:,} cancelled"]
        if self.replays:
            parts.append(f"replays: {self.calls:,} calls ({self.outcomes['allow']:,} allowed, {self.outcomes['prompt']:,} "
                         f"prompts, {self.outcomes['deny']:,} denied), {self.parallel_batches:,} of {self.batches:,} batches "
                         f"in parallel, {self.saved_s:.1f} s of {self.serial_s:.1f} s of tool time saved")
        if self.stop_reasons:
            parts.append("agents: " + ", ".join(f"{n:,} {reason}" for reason, n in self.stop_reasons.most_common())
                         + f"; {sum(self.agent_calls.values()):,} calls, {self.prompts:,} prompts")
        parts.extend(f"failed: {name}: {error}" for name, error in self.failures[:3])
        return "\n".join(parts)


# -- the run directory -----------------------------------------------------------------------------------
def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60] or "session"


class RunDirectory:
    """``results.jsonl`` (one line per finished session), ``run.json`` (what the run is) and
    ``artifacts/``. Opening one that holds a run reads which sessions finished."""

    def __init__(self, folder: str | os.PathLike[str], sessions: int) -> None:
        self.path = Path(os.path.abspath(os.path.expanduser(os.fspath(folder))))
        if self.path.exists() and not self.path.is_dir():
            raise ConfigurationError(f"run_dir must be a folder (made if missing), but {self.path} is a file")
        self.path.mkdir(parents=True, exist_ok=True)
        self.sessions = sessions
        self.done = bytearray((sessions + 7) // 8)
        self.finished = 0
        self._out: Any = None
        meta = self.path / RUN
        if meta.exists():
            recorded = json.loads(meta.read_text(encoding="utf-8")).get("sessions")
            if recorded != sessions:
                raise ConfigurationError(f"the run directory {self.path} holds a run of {recorded} sessions, not {sessions}: "
                                         "resume it with the same tasks, or give another run_dir")
        else:
            meta.write_text(json.dumps({"sessions": sessions, "format": 1}) + "\n", encoding="utf-8")

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS

    def is_done(self, index: int) -> bool:
        return bool(self.done[index >> 3] & (1 << (index & 7)))

    def _mark(self, index: int) -> None:
        self.done[index >> 3] |= 1 << (index & 7)

    def results(self) -> Iterator[SessionResult]:
        """Every session the file holds, read back one at a time."""
        if not self.results_path.exists():
            return
        with open(self.results_path, "rb") as src:
            for raw in src:
                if raw.endswith(b"\n"):
                    yield result_from_json(json.loads(raw))

    def read(self, labels: Callable[[int], str]) -> Iterator[SessionResult]:
        """The finished sessions already in the file (each checked against its task's label),
        one at a time; a last line cut short by an interrupted write is dropped."""
        path = self.results_path
        if not path.exists():
            return
        good = 0
        with open(path, "rb") as src:
            for raw in src:
                if not raw.endswith(b"\n"):
                    break  # the write was cut short: this session runs again
                try:
                    data = json.loads(raw)
                except ValueError:
                    break
                index = data.get("index")
                if not isinstance(index, int) or not 0 <= index < self.sessions:
                    raise ConfigurationError(f"{path} names session {index!r}, which this run does not have")
                expected = labels(index)
                if data.get("name") != expected:
                    raise ConfigurationError(f"{path} holds session {index} as {data.get('name')!r}, but task {index} is "
                                             f"{expected!r}: resume with the same tasks in the same order, or give another run_dir")
                good += len(raw)
                if self.is_done(index):
                    continue
                self._mark(index)
                self.finished += 1
                yield result_from_json(data)
        if good != path.stat().st_size:
            with open(path, "r+b") as out:
                out.truncate(good)

    def write(self, result: "SessionResult") -> None:
        """Append one finished session (ok or failed; a cancelled one runs again on resume)."""
        if result.status == "cancelled" or self.is_done(result.index):
            return
        if self._out is None:
            self._out = open(self.results_path, "a", encoding="utf-8")
        self._out.write(json.dumps(result_to_json(result), separators=(",", ":"), default=str) + "\n")
        self._out.flush()
        self._mark(result.index)
        self.finished += 1

    def save_artifacts(self, result: "SessionResult") -> None:
        """Write an agent session's artifacts under ``artifacts/<index>-<name>/`` and keep the folder's path."""
        value = result.value
        if not isinstance(value, AgentSummary) or value.artifacts is None:
            return
        found = value.artifacts
        folder = self.path / "artifacts" / f"{result.index:06d}-{_safe(result.name)}"
        (folder / "files").mkdir(parents=True, exist_ok=True)
        if found.transcript is not None:
            (folder / "transcript.jsonl").write_text(found.transcript, encoding="utf-8")
        for name, data in found.files.items():
            target = folder / "files" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        found.folder = os.fspath(folder)

    def close(self) -> None:
        if self._out is not None:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()
            self._out = None

    def write_parquet(self, batch: int = 10_000) -> str | None:
        """``results.parquet``: one flat row per finished session (``ROW_TYPES``), written from
        ``results.jsonl`` ``batch`` rows at a time (so never the whole run in memory) with
        pyarrow, which Ray Data brings (``pip install "ray[data]"``); None without it. Read it
        with ``ray.data.read_parquet``, pandas or DuckDB."""
        try:  # optional, and untyped: imported by name
            pyarrow = importlib.import_module("pyarrow")
            parquet = importlib.import_module("pyarrow.parquet")
        except ImportError:
            return None
        if not self.results_path.exists():
            return None
        kinds = {int: pyarrow.int64(), float: pyarrow.float64(), str: pyarrow.string()}
        schema = pyarrow.schema([(name, kinds[kind]) for name, kind in ROW_TYPES.items()])
        target = self.path / "results.parquet"
        partial = self.path / "results.parquet.partial"
        with parquet.ParquetWriter(os.fspath(partial), schema) as writer, open(self.results_path, "rb") as src:
            rows: list[dict[str, Any]] = []
            for raw in src:
                if raw.endswith(b"\n"):
                    rows.append(session_row(json.loads(raw)))
                if len(rows) >= batch:
                    writer.write_table(pyarrow.Table.from_pylist(rows, schema=schema))
                    rows = []
            if rows:
                writer.write_table(pyarrow.Table.from_pylist(rows, schema=schema))
        os.replace(partial, target)  # a reader never sees half a file
        return os.fspath(target)
