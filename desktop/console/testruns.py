"""Live test counts from a console's plain text: pytest, jest, vitest, Playwright and node:test, also run through
turbo or `pnpm -r` (whose line prefixes keep each package's run apart). Until a run prints its final summary its
counts come from the per-test lines; once the summary is there, it is what counts. Counts add up over every run
in the log."""

import re
from dataclasses import dataclass, field

import re2  # type: ignore[import-untyped]

from desktop.console.redact import redact

# turbo: "web:test: …"; pnpm -r: "packages/web test: …"
PREFIX = re.compile(r"^(?:[\w@.\-]+(?:/[\w@.\-]+)*:[\w.\-]+: |[\w@.\-]*/[\w@./\-]+ [\w.:\-]+: )")


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, other: "Counts") -> None:
        self.passed, self.failed, self.skipped = (self.passed + other.passed, self.failed + other.failed,
                                                  self.skipped + other.skipped)


@dataclass
class _Run:
    """One package's runs: the totals of the runs that ended, and the run going on now, counted test by test
    (`live`) until it prints a summary. A summary is a snapshot of the whole run (a terminal reporter redraws it
    as tests finish), so a later one replaces an earlier; node:test and Playwright print theirs a count a line."""

    done: Counts = field(default_factory=Counts)
    live: Counts = field(default_factory=Counts)
    summary: Counts | None = None
    summary_words: set[str] = field(default_factory=set)

    def start(self) -> None:
        """A new run begins (its runner said so): the one before it ended."""
        self.done.add(self.current())
        self.live, self.summary, self.summary_words = Counts(), None, set()

    def current(self) -> Counts:
        return self.summary if self.summary is not None else self.live

    def total(self) -> Counts:
        total = Counts()
        total.add(self.done)
        total.add(self.current())
        return total


def _numbers(text: str, words: dict[str, str]) -> Counts:
    counts = Counts()
    for number, word in re.findall(r"(\d+) (\w+)", text):
        kind = words.get(word)
        if kind:
            setattr(counts, kind, getattr(counts, kind) + int(number))
    return counts


PYTEST_WORDS = {"passed": "passed", "xpassed": "passed", "failed": "failed", "error": "failed", "errors": "failed",
                "skipped": "skipped", "xfailed": "skipped"}
JEST_WORDS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "todo": "skipped"}  # and vitest's

# (runner, pattern, what a match means): "pass" / "fail" / "skip" one test; "summary" a whole run's counts;
# "line-summary" one count of a summary printed a count a line; "verbose" / "progress" pytest's per-test lines;
# "start" begins a run (and names the runner), "signature" only names it;
# "failure-name" names the first failure seen only as an `F` in pytest's dots.
# The first rule that matches a line decides.
LINE_RULES: list[tuple[str, str, str]] = [
    (runner, pattern, kind) for runner, pattern, kind in (
        # lines that say which runner this is (its per-test lines may look like another's)
        ("pytest", r"^=+ test session starts =+$", "start"),
        ("vitest", r"^[ \t]*RUN[ \t]+v\d", "start"),
        ("jest", r"^Test Suites:", "signature"),
        ("playwright", r"^Running \d+ tests? using \d+ workers?", "start"),
        ("node:test", r"^TAP version \d+$", "start"),
        ("pytest", r"^FAILED (?P<name>\S+::\S+)", "failure-name"),
        ("pytest", r"^=*[ \t]*(?P<body>(?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected"
                   r"|warnings?|rerun)(?:, )?)+) in [\d.]+s", "summary"),
        ("pytest", r"^(?P<name>\S+::\S+)(?: \S+)* (?P<kind>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b",
         "verbose"),
        ("pytest", r"^(?P<name>\S+\.py) (?P<dots>[.FEsxX]+)[ \t]*(?:\[[ \t]*\d+%\])?$", "progress"),
        ("vitest", r"^[ \t]*Tests[ \t]+(?P<body>(?:\d+ \w+(?: \| )?)+) \(\d+\)", "summary"),
        ("jest", r"^Tests:[ \t]+(?P<body>.*\d+ total)", "summary"),
        ("node:test", r"^(?:ℹ|#) (?P<word>pass|fail|skipped|todo|tests) (?P<n>\d+)$", "line-summary"),
        ("playwright", r"^[ \t]+(?P<n>\d+) (?P<word>passed|failed|skipped|flaky|did not run)(?: \(.*\))?$",
         "line-summary"),
        ("playwright", r"^[ \t]+✓[ \t]+\d+ (?P<name>.*?)(?: \(\d+(?:\.\d+)?m?s\))?$", "pass"),
        ("playwright", r"^[ \t]+✘[ \t]+\d+ (?P<name>.*?)(?: \(\d+(?:\.\d+)?m?s\))?$", "fail"),
        ("playwright", r"^[ \t]+-[ \t]+\d+ (?P<name>\[.*)$", "skip"),
        ("jest", r"^[ \t]+✓ (?P<name>.*?)(?: \(\d+ ms\))?$", "pass"),
        ("jest", r"^[ \t]+✕ (?P<name>.*?)(?: \(\d+ ms\))?$", "fail"),
        ("jest", r"^[ \t]+○ (?:skipped|todo) (?P<name>.*)$", "skip"),
        ("vitest", r"^[ \t]+[✓√] (?P<name>.*?)(?: \d+m?s)?$", "pass"),
        ("vitest", r"^[ \t]+[×✗] (?P<name>.*?)(?: \d+m?s)?$", "fail"),
        ("vitest", r"^[ \t]+↓ (?P<name>.*?)(?: \[skipped\])?$", "skip"),
        ("node:test", r"^[ \t]*✔ (?P<name>.*?)(?: \([\d.]+m?s\))?$", "pass"),
        ("node:test", r"^[ \t]*✖ (?P<name>.*?)(?: \([\d.]+m?s\))?$", "fail"),
        ("node:test", r"^[ \t]*﹣ (?P<name>.*?)(?: \([\d.]+m?s\))?(?: # \w+.*)?$", "skip"),
        ("node:test", r"^[ \t]*ok \d+ - (?P<name>.*?) # (?:SKIP|TODO)\b", "skip"),
        ("node:test", r"^[ \t]*ok \d+ - (?P<name>.*)$", "pass"),
        ("node:test", r"^[ \t]*not ok \d+ - (?P<name>.*)$", "fail"),
    )]
RULES = [re.compile(pattern) for _, pattern, _ in LINE_RULES]
# All rules in one pattern over whole lines, each rule a group (2 + its index), after an optional package prefix: one
# pass of RE2 (a DFA, over the UTF-8 bytes, twice as fast here as Python's engine) finds every line that counts;
# the rule's own pattern then reads that line.
COMBINED = re2.compile(("(?m)^(" + PREFIX.pattern.removeprefix("^") + ")?(?:" + "|".join(
    "(" + re.sub(r"\(\?P<\w+>", "(?:", pattern.removeprefix("^")) + ")" for _, pattern, _ in LINE_RULES)
    + ")").encode())


SUMMARY_WORDS = {"pass": "passed", "passed": "passed", "flaky": "passed", "fail": "failed", "failed": "failed",
                 "skipped": "skipped", "todo": "skipped", "did not run": "skipped"}


class TestRuns:
    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        self.runner: str | None = None
        self._signed = False  # the runner was named by a signature line, not guessed from a test line
        self.first_failure: dict[str, object] | None = None  # {"raw_line": n, "name": …}
        self._runs: dict[str, _Run] = {}

    def counts(self) -> Counts:
        total = Counts()
        for run in self._runs.values():
            total.add(run.total())
        return total

    def summary(self) -> dict[str, object]:
        counts = self.counts()
        return {"runner": self.runner, "passed": counts.passed, "failed": counts.failed, "skipped": counts.skipped,
                "first_failure": self.first_failure}

    def feed(self, text: str, first_raw_line: int) -> None:
        """Plain text of whole lines; `first_raw_line` is the raw line number of its first line."""
        data = text.encode()
        line_at, counted = 0, 0
        for match in COMBINED.finditer(data):
            index = match.lastindex - 2  # group 1 is the prefix, then one group a rule (and no others)
            runner, _, kind = LINE_RULES[index]
            found = RULES[index].match(match.group(index + 2).decode())
            if found is None:
                continue
            if kind in ("signature", "start"):
                if not self._signed:
                    self.runner, self._signed = runner, True
                if kind == "start":
                    self._runs.setdefault((match.group(1) or b"").decode(), _Run()).start()
                continue
            if kind == "failure-name":
                if self.first_failure is not None and "::" not in str(self.first_failure["name"]):
                    self.first_failure["name"] = redact(found["name"])
                continue
            self.runner = self.runner or runner
            if kind in ("fail", "verbose", "progress"):  # a failure's raw line may be needed
                line_at += data.count(b"\n", counted, match.start())
                counted = match.start()
            run = self._runs.setdefault((match.group(1) or b"").decode(), _Run())  # the package prefix
            self._count(run, runner, kind, {k: v for k, v in found.groupdict().items() if v is not None},
                        first_raw_line + line_at)

    def _count(self, run: _Run, runner: str, kind: str, match: dict[str, str], raw_line: int) -> None:
        if kind == "summary":
            body = match["body"]
            run.summary = _numbers(body, PYTEST_WORDS if runner == "pytest" else JEST_WORDS)
            run.summary_words = set()
        elif kind == "line-summary":
            word = match["word"]
            if run.summary is None or word in run.summary_words or word == "tests":
                run.summary, run.summary_words = Counts(), set()  # a fresh snapshot begins
            run.summary_words.add(word)
            if word in SUMMARY_WORDS:
                name = SUMMARY_WORDS[word]
                setattr(run.summary, name, getattr(run.summary, name) + int(match["n"]))
        elif kind == "verbose":
            outcome = {"PASSED": "pass", "XPASS": "pass", "FAILED": "fail", "ERROR": "fail"}.get(match["kind"], "skip")
            self._one(run, outcome, match["name"], raw_line)
        elif kind == "progress":
            for char in match["dots"]:
                self._one(run, "pass" if char in ".X" else "fail" if char in "FE" else "skip", match["name"], raw_line)
        else:
            self._one(run, kind, match["name"], raw_line)

    def _one(self, run: _Run, outcome: str, name: str, raw_line: int) -> None:
        if outcome == "pass":
            run.live.passed += 1
        elif outcome == "fail":
            run.live.failed += 1
            if self.first_failure is None:
                self.first_failure = {"raw_line": raw_line, "name": redact(name.strip())}
        else:
            run.live.skipped += 1


def failure_heading(name: str) -> re.Pattern[str]:
    """The line where a failing test's report begins (its traceback, not the summary that names it): pytest's
    `____ TestX.test_y ____`, Jest's `● Suite › name`, Vitest's `FAIL  file > suite > name`, node:test's
    `not ok 3 - name`."""
    short = re.escape(".".join(name.split("::")[1:]) if "::" in name else name)
    return re.compile(rf"^_+ {short} _+$|^\s*● (?:.* › )?{short}$|^\s*FAIL\s.*> {short}$|^\s*not ok \d+ - {short}$")
