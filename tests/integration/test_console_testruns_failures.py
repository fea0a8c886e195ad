"""The first failure (raw line + name) and the counts for the runs where a runner names its failures late or not
at all: pytest's collection errors, setup and teardown errors, INTERNALERROR, pytest-xdist (-q, -v, a crashed
worker), jest --runInBand and through pnpm, Playwright's line, dot and CI reporters, Vitest's unhandled errors and a
crashed worker, node:test's dot reporter. Each a real run, through a pipe, in colour and on a pseudo-terminal."""

from pathlib import Path

import pytest

from desktop.console.stream import ConsoleStream
from desktop.console.testruns import failure_heading
from tests.integration.test_console_testruns import PYTEST, PYTEST_COLOURS, RUNNERS, counted, report_line, run_in

# without the plugins the suite's own environment loads (pytest-qt, hypothesis, …): the same output, seconds sooner
BARE = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
XDIST = [*PYTEST, "-p", "xdist", "-n", "2"]
JEST = [str(RUNNERS / ".bin" / "jest"), "--ci"]
PLAYWRIGHT = [str(RUNNERS / ".bin" / "playwright"), "test"]
VITEST = [str(RUNNERS / ".bin" / "vitest"), "run"]
CHROMIUM_FAILURE = "[chromium] › sample.spec.js:5:1 › fails on purpose"

# case: (fixture folder, argv, per-mode flags, environment,
#        (runner, passed, failed, skipped), the first failure's name, what its report's first line holds)
CASES: dict[str, tuple[str, list[str], dict[str, list[str]], dict[str, str], tuple[str, int, int, int], str, str]] = {
    "pytest collection error": (
        "pytest-collection",
        PYTEST,
        PYTEST_COLOURS,
        BARE,
        ("pytest", 0, 1, 0),
        "test_broken.py",
        " ERROR collecting test_broken.py _",
    ),
    # pytest: "1 failed, 2 passed, 1 skipped, 2 errors" (the test whose teardown failed passed, and errored)
    "pytest setup and teardown errors": (
        "pytest-fixtures",
        PYTEST,
        PYTEST_COLOURS,
        BARE,
        ("pytest", 2, 3, 1),
        "test_fixtures.py::test_setup_fails_on_purpose",
        " ERROR at setup of test_setup_fails_on_purpose _",
    ),
    "pytest INTERNALERROR": (
        "pytest-internalerror",
        PYTEST,
        PYTEST_COLOURS,
        BARE,
        ("pytest", 2, 0, 0),
        "INTERNALERROR",
        "INTERNALERROR> Traceback",
    ),
    "pytest-xdist -q": (
        "pytest",
        [*XDIST, "-q"],
        PYTEST_COLOURS,
        BARE,
        ("pytest", 3, 1, 1),
        "test_sample.py::test_fails_on_purpose",
        " test_fails_on_purpose _",
    ),
    "pytest-xdist -v": (
        "pytest",
        [*XDIST, "-v"],
        PYTEST_COLOURS,
        BARE,
        ("pytest", 3, 1, 1),
        "test_sample.py::test_fails_on_purpose",
        " test_fails_on_purpose _",
    ),
    "pytest-xdist worker crash": (
        "pytest-crash",
        XDIST,
        PYTEST_COLOURS,
        BARE,
        ("pytest", 4, 2, 1),
        "test_crash.py::test_crashes_on_purpose",
        " test_crash.py _",
    ),
    "jest --runInBand": (
        "jest",
        [*JEST, "--runInBand"],
        {},
        {},
        ("jest", 3, 1, 1),
        "fails on purpose",
        "  ● fails on purpose",
    ),
    "jest through pnpm -r": (
        "jest-pnpm",
        [str(RUNNERS / ".bin" / "pnpm"), "--reporter=append-only", "-r", "--no-bail", "test"],
        {},
        {},
        ("jest", 5, 1, 1),
        "fails on purpose",
        "packages/app test:   ● fails on purpose",
    ),
    "playwright line": (
        "playwright",
        [*PLAYWRIGHT, "--reporter=line"],
        {},
        {},
        ("playwright", 3, 1, 1),
        CHROMIUM_FAILURE,
        f"  1) {CHROMIUM_FAILURE} ─",
    ),
    "playwright dot": (
        "playwright",
        [*PLAYWRIGHT, "--reporter=dot"],
        {},
        {},
        ("playwright", 3, 1, 1),
        CHROMIUM_FAILURE,
        f"  1) {CHROMIUM_FAILURE} ─",
    ),
    "playwright CI": (
        "playwright",
        PLAYWRIGHT,
        {},
        {"CI": "1"},
        ("playwright", 3, 1, 1),
        CHROMIUM_FAILURE,
        f"  1) {CHROMIUM_FAILURE} ─",
    ),
    "vitest unhandled rejection": (
        "vitest-unhandled",
        VITEST,
        {},
        {},
        ("vitest", 3, 0, 1),
        "Unhandled Rejection",
        "⎯ Unhandled Rejection ⎯",
    ),
    "vitest worker crash": (
        "vitest-crash",
        VITEST,
        {},
        {},
        ("vitest", 2, 0, 1),
        "Unhandled Error",
        "⎯ Unhandled Error ⎯",
    ),
    # 6 passed, 2 failed, 2 skipped: the dot reporter shows skipped and todo tests as passes (`.`), and a suite
    # as a mark of its own (this one's is an `X`, told apart in its report by "1 subtest failed")
    "node:test dot reporter": (
        "nodetest-dot",
        ["node", "--test", "--test-reporter=dot"],
        {},
        {},
        ("node:test", 8, 2, 0),
        "fails on purpose",
        "✖ fails on purpose (",
    ),
}


@pytest.mark.parametrize("mode", ["plain", "colour", "pty"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_first_failure_where_its_report_begins(case: str, mode: str, tmp_path: Path) -> None:
    folder, argv, flags, env, expected, name, report = CASES[case]
    raw = run_in(folder, argv + flags.get(mode, []), mode, tmp_path, env)
    summary = counted(raw, mode)
    shown = raw.decode(errors="replace")
    assert (summary["runner"], summary["passed"], summary["failed"], summary["skipped"]) == expected, shown
    assert summary["first_failure"]["name"] == name, shown
    assert report in report_line(raw, summary), shown


def test_pytest_counts_setup_and_teardown_errors_as_its_summary_does_while_it_runs(tmp_path: Path) -> None:
    raw = run_in("pytest-fixtures", [*PYTEST, "--color=no"], "plain", tmp_path, BARE)
    assert b"= 1 failed, 2 passed, 1 skipped, 2 errors in " in raw
    before_the_summary = raw[: raw.rindex(b"\n=")]  # per-test progress only
    stream = ConsoleStream(colours=False, lines=False)
    stream.feed(before_the_summary)
    counts = stream.tests.counts()
    assert (counts.passed, counts.failed, counts.skipped) == (2, 3, 1)


def counts_of(text: str) -> tuple[int, int, int, dict[str, object] | None]:
    stream = ConsoleStream(colours=False, lines=False)
    stream.feed(text.encode())
    stream.finish()
    counts = stream.tests.counts()
    return counts.passed, counts.failed, counts.skipped, stream.tests.first_failure


def test_a_line_of_dots_alone_is_no_test_run() -> None:
    assert counts_of("waiting for the database\n....\nready\n.X.\n") == (0, 0, 0, None)
    # "Failed tests:" counts node:test's dots only right after them (a blank line between); the `✖` line is a failure
    # either way (spec's)
    assert counts_of("..X.\n\nsomething else\nFailed tests:\n\n✖ fails (1ms)\n")[:2] == (0, 1)
    assert counts_of("..X.\n\nFailed tests:\n\n✖ fails (1ms)\n") == (3, 1, 0, {"raw_line": 5, "name": "fails"})


def test_a_numbered_line_or_an_underlined_title_is_no_failure_outside_a_test_run() -> None:
    assert counts_of("Steps:\n  1) install\n____ Notes ____\n  ● bullet\n")[3] is None


def test_a_report_for_another_test_is_not_the_first_failures() -> None:
    """pytest prints ERRORS before FAILURES: the first failure (`F`) keeps looking for its own report."""
    log = (
        "============ test session starts ============\n"
        "t.py::test_a FAILED\nt.py::test_b ERROR\n"
        "================== ERRORS ===================\n"
        "_________ ERROR at setup of test_b __________\n"
        "================= FAILURES ==================\n"
        "___________________ test_a __________________\n"
        "========= 1 failed, 1 error in 0.1s =========\n"
    )
    assert counts_of(log) == (0, 2, 0, {"raw_line": 7, "name": "t.py::test_a"})


@pytest.mark.parametrize(
    ("name", "heading"),
    [
        ("test_sample.py::test_fails_on_purpose", "________________ test_fails_on_purpose ________________"),
        ("t.py::TestBox::test_lid[1-2]", "____ TestBox.test_lid[1-2] ____"),
        ("test_fixtures.py::test_x", "____________ ERROR at setup of test_x _____________"),
        ("test_fixtures.py::test_x", "_ ERROR at teardown of test_x _"),
        ("test_broken.py", "__________ ERROR collecting test_broken.py ___________"),
        ("test_crash.py::test_crashes_on_purpose", "_____________ test_crash.py _____________"),
        ("INTERNALERROR", "INTERNALERROR> Traceback (most recent call last):"),
        ("fails on purpose", "  ● fails on purpose"),
        ("fails on purpose", "  ● Maths › adding › fails on purpose"),
        ("fails on purpose", "packages/app test:   ● fails on purpose"),
        ("fails on purpose", " FAIL  sample.test.js > fails on purpose"),
        ("fails on purpose", "alpha:test:  FAIL  sample.test.js > maths > fails on purpose"),
        ("Unhandled Rejection", "⎯⎯⎯⎯ Unhandled Rejection ⎯⎯⎯⎯⎯"),
        ("Unhandled Error", "⎯⎯⎯⎯⎯⎯ Unhandled Error ⎯⎯⎯⎯⎯⎯⎯"),
        (CHROMIUM_FAILURE, f"  1) {CHROMIUM_FAILURE} ────────────────────"),
        ("sample.spec.js:5:1 › fails on purpose", "  12) sample.spec.js:5:1 › fails on purpose ─────────"),
        ("fails on purpose", "not ok 3 - fails on purpose"),
        ("fails on purpose", "✖ fails on purpose (1.310618ms)"),
    ],
)
def test_failure_heading_finds_where_a_report_begins(name: str, heading: str) -> None:
    assert failure_heading(name).search(heading)


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("test_sample.py::test_fails_on_purpose", "FAILED test_sample.py::test_fails_on_purpose - assert (2 + 2) == 5"),
        ("test_sample.py::test_fails_on_purpose", "test_sample.py::test_fails_on_purpose FAILED  [ 60%]"),
        ("test_fixtures.py::test_x", "ERROR test_fixtures.py::test_x - RuntimeError"),
        ("test_broken.py", "ERROR test_broken.py"),
        ("fails on purpose", "  ✕ fails on purpose (2 ms)"),
        ("fails on purpose", "   × fails on purpose 6ms"),
        (CHROMIUM_FAILURE, f"  ✘  3 {CHROMIUM_FAILURE} (8ms)"),
        (CHROMIUM_FAILURE, f"    {CHROMIUM_FAILURE} ─────────────"),  # the summary's list of failures
        ("INTERNALERROR", "Some INTERNALERROR> text"),
        ("fails on purpose", "  ● fails on purpose too"),
        ("Unhandled Error", "⎯⎯⎯⎯⎯⎯ Unhandled Errors ⎯⎯⎯⎯⎯⎯"),  # the section the reports are in, not one of them
    ],
)
def test_failure_heading_skips_the_lines_that_only_name_a_failure(name: str, line: str) -> None:
    assert not failure_heading(name).search(line)
