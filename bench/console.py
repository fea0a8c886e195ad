"""Throughput of the console pipeline: `python -m bench.console [--mb 50]`.

Generates a realistic log (bench/console_log.py: colours, progress bars, build, test and service output; one line in
ten looks like a credential and is not, one in a thousand holds a real one), then prints MB/s side by side in one run:
`cat` reading the file, each stage alone, the full pipeline (decode, ANSI, redaction, cut, fold, test counts), and
detect-secrets scanning the same file, with the pipeline's ratio to both. Rates are MB per CPU second (one core), which
other work on a shared machine moves much less than the wall clock (also shown for the pipeline). It checks that
every planted secret was redacted and counts the lines that were not secrets but were changed. Target: 25 MB/s for
the full pipeline on one core (goal 50 MB/s)."""

import argparse
import bisect
import codecs
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.console_log import Planted, make_log
from desktop.console import ansi
from desktop.console.redact import MARK, Redactor
from desktop.console.stream import ConsoleStream, Line
from desktop.console.testruns import TestRuns

CHUNK = 1 << 16
BATCH = 800  # lines a stage is given at once, about what one 64 KiB read holds


def children_cpu() -> float:
    """CPU seconds used so far by the programs this one ran and waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rate(path: Path, run: Callable[[bytes], object], final: Callable[[], object] = lambda: None) -> tuple[float, float]:
    """(MB per CPU second, MB per wall-clock second) of `run` over the file's reads."""
    size = path.stat().st_size / 1e6
    cpu, wall = time.process_time(), time.perf_counter()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            run(chunk)
    final()
    return size / (time.process_time() - cpu), size / (time.perf_counter() - wall)


def cat_rate(path: Path) -> float:
    """`cat` reading the file (from the page cache): MB per CPU second, best of three."""
    times = []
    for _ in range(3):
        used = children_cpu()
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
        times.append(children_cpu() - used)
    return path.stat().st_size / 1e6 / max(min(times), 1e-6)


def stage_rates(path: Path) -> dict[str, float]:
    """MB per CPU second of each stage alone, given the whole file in reads of about 64 KiB."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text_chunks: list[str] = []
    decode, _ = rate(path, lambda chunk: text_chunks.append(decoder.decode(chunk)))
    lines = "".join(text_chunks).split("\n")
    size = path.stat().st_size / 1e6

    def timed(work: Callable[[], object]) -> float:
        started = time.process_time()
        work()
        return size / (time.process_time() - started)

    batches = ["\n".join(lines[i : i + BATCH]) for i in range(0, len(lines), BATCH)]
    split = [batch.split("\n") for batch in batches]
    plain = [ansi.clean(batch, lines) for batch, lines in zip(batches, split, strict=True)]
    redactor, tests = Redactor(), TestRuns()

    def count_tests() -> None:
        for bare in plain:
            tests.feed(bare, 1)

    def redact() -> None:
        for lines, bare in zip(split, plain, strict=True):
            redactor.redact_lines(lines[:], bare)

    return {
        "decode": decode,
        "split into lines": timed(lambda: [batch.split("\n") for batch in batches]),
        "ansi (clean, colours off)": timed(
            lambda: [ansi.clean(batch, lines[:]) for batch, lines in zip(batches, split, strict=True)]
        ),
        "redact": timed(redact),
        "test counts (testruns.py)": timed(count_tests),
    }


def detect_secrets_rate(path: Path, megabytes: int = 2) -> tuple[float, int] | None:
    """detect-secrets over the first `megabytes` of the same log (it runs at well under 1 MB/s): (MB per CPU second,
    findings)."""
    sample = path.with_name("sample.log")
    with open(path, "rb") as f:
        head = f.read(megabytes * 1_000_000)
    sample.write_bytes(head[: head.rfind(b"\n") + 1])  # whole lines: it skips a file that is not valid UTF-8
    used = children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "detect_secrets", "scan", sample.name], capture_output=True, cwd=sample.parent
    )
    if done.returncode != 0:
        return None
    findings = sum(len(found) for found in json.loads(done.stdout)["results"].values())
    return sample.stat().st_size / 1e6 / (children_cpu() - used), findings


def check(reads: list[list[Line]], planted: Planted) -> tuple[int, int, int, int]:
    """A run's output: (console lines, planted secrets shown, credential-looking benign lines changed, other lines
    without a secret changed)."""
    by_raw: dict[int, Line] = {}  # a console line by its first raw line
    for changed in reads:
        for line in changed:
            by_raw[line.raw_line] = line
    starts = sorted(by_raw)

    def shown(raw: int) -> str:  # the console line that shows a raw line (repeats fold into the first)
        return ansi.strip_sgr(by_raw[starts[bisect.bisect_right(starts, raw) - 1]].text)

    leaked = sum(1 for raw, parts in planted.secrets.items() if any(part in shown(raw) for part in parts))
    benign = set(planted.benign)
    touched = [
        raw
        for line in by_raw.values()
        if MARK in line.text
        for raw in range(line.raw_line, line.raw_line + line.count)
        if raw not in planted.secrets
    ]
    looking = sum(1 for raw in touched if raw in benign)
    return len(by_raw), leaked, looking, len(touched) - looking


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=50, help="size of the generated log (default 50)")
    parser.add_argument("--runs", type=int, default=3, help="full-pipeline runs; the median is shown (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "build.log"
        planted = make_log(path, args.mb)
        size = path.stat().st_size / 1e6
        cat = cat_rate(path)
        cpus: list[float] = []
        walls: list[float] = []
        for _ in range(args.runs):  # a consumer that shows the lines and keeps none (as a console's rows do)
            stream, shown_lines = ConsoleStream(), [0]
            cpu, wall = rate(
                path,
                lambda chunk: shown_lines.append(len(stream.feed(chunk))),  # noqa: B023
                lambda: stream.finish(),  # noqa: B023
            )
            cpus.append(cpu)
            walls.append(wall)
        stream, reads = ConsoleStream(), []  # once more, keeping every line, to check them
        rate(path, lambda chunk: reads.append(stream.feed(chunk)), lambda: reads.append(stream.finish()))
        full = statistics.median(cpus)
        shown, leaked, looking, other = check(reads, planted)
        print(
            f"console pipeline over a generated {size:.1f} MB log: {shown:,} console lines, "
            f"{len(planted.benign):,} credential-looking benign lines, {len(planted.secrets)} lines with a secret"
        )
        print(
            f"  lines with a secret still showing it: {leaked} of {len(planted.secrets)}; lines changed that hold "
            f"no secret: {looking} of the {len(planted.benign):,} credential-looking ones, {other} others"
        )
        print("  MB per CPU second on one core (what other work on the machine moves least):")
        print(f"  {'cat (reading the file)':<28} {cat:9.1f} MB/s")
        for name, value in stage_rates(path).items():
            print(f"  {name:<28} {value:9.1f} MB/s")
        runs = ", ".join(f"{value:.1f}" for value in cpus)
        print(f"  {'full pipeline':<28} {full:9.1f} MB/s   median of {runs}; target 25, goal 50")
        print(f"  {'  by the wall clock':<28} {statistics.median(walls):9.1f} MB/s")
        scanned = detect_secrets_rate(path)
        if scanned is None:
            print(f"  {'detect-secrets scan':<28}       n/a    (pip install detect-secrets)")
        else:
            print(f"  {'detect-secrets scan':<28} {scanned[0]:9.2f} MB/s   first 2 MB only; {scanned[1]} findings")
        print(
            f"  pipeline / cat: {full / cat:.4f}"
            + (f"   pipeline / detect-secrets: {full / scanned[0]:.0f}×" if scanned else "")
        )
        return 1 if leaked else 0


if __name__ == "__main__":
    sys.exit(main())
