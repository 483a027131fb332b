"""The verdict every exercise checker prints."""

from __future__ import annotations

from teaching.checks import run_check


def test_a_stub_not_written_yet_is_said_so_without_a_traceback() -> None:
    def stub(case: int) -> list[str]:
        raise NotImplementedError

    verdict = run_check("partition", range(5), stub)
    assert not verdict.ok and verdict.unwritten and verdict.cases == 1
    assert "not written yet" in str(verdict)


def test_wrong_cases_are_named_and_counted() -> None:
    verdict = run_check("doubling", range(6), lambda n: [f"{n} gave {n}, expected {2 * n}"] if n % 2 else [])
    assert not verdict.ok
    text = str(verdict)
    assert text.startswith("✗ doubling: 3 of 6 cases are wrong.")
    assert "1 gave 1, expected 2" in text


def test_an_exception_in_the_learners_code_is_a_problem_that_names_it() -> None:
    verdict = run_check("division", [1, 0], lambda n: [] if 1 / n else [])
    assert not verdict.ok
    assert "ZeroDivisionError" in str(verdict)


def test_an_exception_in_the_learners_code_names_the_learners_line() -> None:
    from teaching.sessions import check_completed_calls

    def looks_up_a_missing_key(chunks: list[dict[str, object]]) -> list[tuple[int, str, str, str]]:
        return [chunks[0]["no_such_key"]]  # type: ignore[list-item]

    text = str(check_completed_calls(looks_up_a_missing_key))
    assert "your code raised KeyError: 'no_such_key'" in text
    assert "in looks_up_a_missing_key: return [chunks[0][\"no_such_key\"]]" in text


def test_junk_the_checker_cannot_read_is_a_wrong_shape_not_the_learners_error() -> None:
    from teaching.sessions import check_completed_calls

    text = str(check_completed_calls(lambda chunks: [1]))
    assert "your function returned something of the wrong shape: [1]" in text
    assert "your code raised" not in text


def test_every_case_agreeing_passes() -> None:
    verdict = run_check("identity", range(4), lambda n: [])
    assert verdict.ok and str(verdict) == "✓ identity: all 4 cases agree."


def test_no_case_is_not_a_pass() -> None:
    assert not run_check("empty", [], lambda n: []).ok
