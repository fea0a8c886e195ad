"""50 SIGKILLs of the daemon at random moments under load; the invariants hold after every restart."""

from pathlib import Path

from bench.crash import run_rounds


def test_fifty_kills_lose_nothing_and_run_nothing_twice(tmp_path: Path) -> None:
    figures = run_rounds(50, tmp_path, seed=11)
    assert figures["acknowledged"] > 100, figures
    assert figures["done"] > 20, figures
