"""Throughput of the console pipeline: `python -m bench.console [--mb 50]`.

Generates a realistic log (colours, progress bars redrawn with carriage returns, test runner output, git SHAs, UUIDs,
integrity hashes and image digests, planted secrets), then prints MB/s side by side in one run: reading the file
alone, each stage alone, the full pipeline, and detect-secrets scanning the same file. It checks that every planted
secret was redacted. Target: 20 MB/s for the full pipeline on one core (goal 50 MB/s)."""

import argparse
import codecs
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from desktop.console import ansi
from desktop.console.redact import Redactor
from desktop.console.stream import ConsoleStream
from desktop.console.testruns import TestRuns

CHUNK = 1 << 16
SECRETS = ["ghp_" + "Zx8" * 12, "glpat-" + "Ab3_" * 6, "xoxb-2410-" + "k3Y" * 6, "sk_live_" + "4eC39Hq" * 3,
           "sk-proj-" + "Qw3rty" * 8, "AKIA" + "ABCDEFGHIJ234567", "AIza" + "Sy3" * 11 + "xy",
           "npm_" + "aB3" * 12,
           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"]


def make_log(path: Path, megabytes: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    planted: list[str] = []
    hexdigits = "0123456789abcdef"
    with open(path, "w", encoding="utf-8", newline="") as f:
        written, n = 0, 0
        while written < megabytes * 1_000_000:
            n += 1
            sha = "".join(rng.choice(hexdigits) for _ in range(40))
            kind = n % 20
            if kind == 0:
                line = "".join(f"\rDownloading layer {sha[:12]} {p}% [{'=' * (p // 5):<20}]" for p in range(0, 101, 10))
            elif kind in (1, 2, 3):
                line = f"\x1b[32m✓\x1b[0m src/module_{n % 97}.test.ts > renders case {n} \x1b[2m{n % 40}ms\x1b[0m"
            elif kind == 4:
                line = f"commit {sha} Merge pull request #{n} from team/feature-{n % 13}"
            elif kind == 5:
                line = (f"\x1b[1m\x1b[34minfo\x1b[0m resolved {rng.randrange(10**6)} packages, integrity "
                        f"sha512-{sha}{sha[:20]}== image sha256:{sha}{sha[:24]}")
            elif kind == 6:
                line = f"request id {sha[:8]}-{sha[8:12]}-{sha[12:16]}-{sha[16:20]}-{sha[20:32]} took {n % 900}ms"
            elif kind == 7 and n % 200 == 7:
                secret = SECRETS[(n // 200) % len(SECRETS)]
                planted.append(secret)
                line = f"export API_KEY_{n}=\x1b[33m{secret}\x1b[0m # do not commit"
            elif kind == 8:
                line = f"tests/test_api.py::test_case_{n} \x1b[32mPASSED\x1b[0m [{n % 100:3d}%]"
            else:
                line = (f"[{n:08d}] \x1b[36mbuild\x1b[0m compiling crate_{n % 300} v0.{n % 9}.0 "
                        f"({rng.choice(['debug', 'release'])}) in {rng.random():.2f}s")
            f.write(line + "\n")
            written += len(line.encode()) + 1
    return planted


def rate(path: Path, run: Callable[[bytes], object], final: Callable[[], object] = lambda: None) -> float:
    size = path.stat().st_size
    started = time.perf_counter()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            run(chunk)
    final()
    return size / 1e6 / (time.perf_counter() - started)


def stage_rates(path: Path) -> dict[str, float]:
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text_chunks: list[str] = []
    decode = rate(path, lambda chunk: text_chunks.append(decoder.decode(chunk)))
    lines = "".join(text_chunks).split("\n")
    size = path.stat().st_size / 1e6

    def timed(work: Callable[[], object]) -> float:
        started = time.perf_counter()
        work()
        return size / (time.perf_counter() - started)

    batches = ["\n".join(lines[i:i + 800]) for i in range(0, len(lines), 800)]
    cleaned = [ansi.clean_line(line) for line in lines]
    redactor, tests = Redactor(), TestRuns()
    return {
        "decode + split": decode,
        "ansi (clean lines)": timed(lambda: [ansi.clean_lines(batch) for batch in batches]),
        "redact": timed(lambda: [redactor.lines(batch) for batch in batches]),
        "test counts": timed(lambda: [tests.feed(ansi.strip_sgr("\n".join(cleaned[i:i + 800])), i + 1)
                                      for i in range(0, len(cleaned), 800)]),
    }


def detect_secrets_rate(path: Path, megabytes: int = 2) -> tuple[float, int] | None:
    """detect-secrets over the first `megabytes` of the same log (it runs at well under 1 MB/s); (MB/s, findings)."""
    sample = path.with_name("sample.log")
    with open(path, "rb") as f:
        sample.write_bytes(f.read(megabytes * 1_000_000))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "detect_secrets", "scan", sample.name], capture_output=True,
                          cwd=sample.parent)
    if done.returncode != 0:
        return None
    findings = sum(len(found) for found in json.loads(done.stdout)["results"].values())
    return sample.stat().st_size / 1e6 / (time.perf_counter() - started), findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=50, help="size of the generated log (default 50)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "build.log"
        planted = make_log(path, args.mb)
        size = path.stat().st_size / 1e6
        read_alone = rate(path, lambda chunk: None)
        stream = ConsoleStream()
        shown: list[str] = []
        full = rate(path, lambda chunk: shown.extend(line.text for line in stream.feed(chunk)),
                    lambda: shown.extend(line.text for line in stream.finish()))
        leaked = [s for s in planted if any(s in line for line in shown)]
        print(f"console pipeline over a generated {size:.1f} MB log ({len(shown):,} console lines, "
              f"{len(planted)} planted secrets, {len(leaked)} let through)")
        print(f"  {'reading the file alone':<28} {read_alone:9.1f} MB/s")
        for name, value in stage_rates(path).items():
            print(f"  {name:<28} {value:9.1f} MB/s")
        print(f"  {'full pipeline':<28} {full:9.1f} MB/s   (target 20, goal 50)")
        scanned = detect_secrets_rate(path)
        shown_rate = (f"{scanned[0]:9.1f} MB/s   (first 2 MB only; {scanned[1]} findings)" if scanned
                      else "      n/a    (pip install detect-secrets)")
        print(f"  {'detect-secrets scan':<28} {shown_rate}")
        return 1 if leaked else 0


if __name__ == "__main__":
    sys.exit(main())
