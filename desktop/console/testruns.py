"""Live test counts and the first failure from a console's plain text: pytest (also under xdist), jest, vitest,
Playwright and node:test, also run through turbo or `pnpm -r` (whose line prefixes keep each package's run apart).
Until a run prints its final summary its counts come from the per-test lines; once the summary is there, it is what
counts. Counts add up over every run in the log. The first failure is the first test seen failing (or, where the
runner names none as it goes, the first report of one); its raw line is where that test's report begins."""

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
        self.passed, self.failed, self.skipped = (
            self.passed + other.passed,
            self.failed + other.failed,
            self.skipped + other.skipped,
        )


@dataclass
class _Run:
    """One package's runs: the totals of the runs that ended, and the run going on now, counted test by test
    (`live`) until it prints a summary. A summary is a snapshot of the whole run (a terminal reporter redraws it
    as tests finish), so a later one replaces an earlier; node:test and Playwright print theirs a count a line."""

    done: Counts = field(default_factory=Counts)
    live: Counts = field(default_factory=Counts)
    summary: Counts | None = None
    summary_words: set[str] = field(default_factory=set)
    runner: str | None = None  # whose output this package's lines are, once a line has said so
    reports: str = ""  # in a section of failure reports: "pytest" (FAILURES, ERRORS), "node:test", "dots"
    dots: Counts | None = None  # node:test's dot reporter: its lines of `.` and `X`, counted once it is known
    dots_end: int = 0  # the raw line of the last of them

    def start(self, runner: str) -> None:
        """A new run begins (its runner said so): the one before it ended."""
        self.done.add(self.current())
        self.live, self.summary, self.summary_words = Counts(), None, set()
        self.runner, self.reports, self.dots = runner, "", None

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


PYTEST_WORDS = {
    "passed": "passed",
    "xpassed": "passed",
    "failed": "failed",
    "error": "failed",
    "errors": "failed",
    "skipped": "skipped",
    "xfailed": "skipped",
}
JEST_WORDS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "todo": "skipped"}  # and vitest's

# (runner, pattern, what a match means): "pass" / "fail" / "skip" one test; "summary" a whole run's counts;
# "line-summary" one count of a summary printed a count a line; "verbose" / "progress" / "dots" pytest's per-test
# lines (and "dots" node:test's dot reporter); "start" begins a run (and names the runner), "signature" only names
# it; "heading" begins a failure's report; "reports" begins a section of them; "failure-name" names a failure
# in full (pytest's short summary); "internal" pytest's own crash; "suite-failed" says the node:test failure
# before it was a suite's. The first rule that matches a line decides.
LINE_RULES: list[tuple[str, str, str]] = [
    (runner, pattern, kind)
    for runner, pattern, kind in (
        # lines that say which runner this is (its per-test lines may look like another's)
        ("pytest", r"^=+ test session starts =+$", "start"),
        ("pytest", r"^bringing up nodes\.\.\.", "signature"),  # xdist under -q
        ("vitest", r"^[ \t]*RUN[ \t]+v\d", "start"),
        ("jest", r"^Test Suites:", "signature"),
        ("playwright", r"^Running \d+ tests? using \d+ workers?", "start"),
        ("node:test", r"^TAP version \d+$", "start"),
        ("pytest", r"^=+ (?:FAILURES|ERRORS) =+$", "reports"),
        ("pytest", r"^_+ (?P<name>.*[^_ ]) _+$", "heading"),
        ("pytest", r"^INTERNALERROR>", "internal"),
        ("pytest", r"^(?:FAILED|ERROR) (?P<name>\S+::\S+)", "failure-name"),
        ("pytest", r"^worker '[^']*' crashed while running '(?P<name>[^']+)'", "failure-name"),
        (
            "pytest",
            r"^=*[ \t]*(?P<body>(?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected"
            r"|warnings?|rerun)(?:, )?)+) in [\d.]+s",
            "summary",
        ),
        ("pytest", r"^(?P<name>\S+::\S+)(?: \S+)* (?P<kind>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b", "verbose"),
        (
            "pytest",
            r"^\[gw\d+\] \[[ \t]*\d+%\] (?P<kind>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (?P<name>\S+)",
            "verbose",
        ),
        ("pytest", r"^(?P<name>\S+\.py) (?P<dots>[.FEsxX]+)[ \t]*(?:\[[ \t]*\d+%\])?$", "progress"),
        ("pytest", r"^(?P<dots>[.FEsxX]+)(?P<tail>[ \t]+\[[ \t]*\d+%\]|\[gw\d+\] node down: .*)?$", "dots"),
        ("vitest", r"^[ \t]*Tests[ \t]+(?P<body>(?:\d+ \w+(?: \| )?)+) \(\d+\)", "summary"),
        ("jest", r"^Tests:[ \t]+(?P<body>.*\d+ total)", "summary"),
        ("node:test", r"^(?:ℹ|#) (?P<word>pass|fail|skipped|todo|tests) (?P<n>\d+)$", "line-summary"),
        (
            "playwright",
            r"^[ \t]+(?P<n>\d+) (?P<word>passed|failed|skipped|flaky|did not run)(?: \(.*\))?$",
            "line-summary",
        ),
        ("playwright", r"^[ \t]+\d+\) (?P<name>.*?)(?:[ \t]+─+)?$", "heading"),
        ("playwright", r"^[ \t]+✓[ \t]+\d+ (?P<name>.*?)(?: \(\d+(?:\.\d+)?m?s\))?$", "pass"),
        ("playwright", r"^[ \t]+✘[ \t]+\d+ (?P<name>.*?)(?: \(\d+(?:\.\d+)?m?s\))?$", "fail"),
        ("playwright", r"^[ \t]+-[ \t]+\d+ (?P<name>\[.*)$", "skip"),
        ("jest", r"^[ \t]*● (?P<name>.+)$", "heading"),
        ("jest", r"^[ \t]+✓ (?P<name>.*?)(?: \(\d+ ms\))?$", "pass"),
        ("jest", r"^[ \t]+✕ (?P<name>.*?)(?: \(\d+ ms\))?$", "fail"),
        ("jest", r"^[ \t]+○ (?:skipped|todo) (?P<name>.*)$", "skip"),
        ("vitest", r"^[ \t]*FAIL[ \t]+(?P<name>.*? > .+)$", "heading"),
        ("vitest", r"^⎯+ (?P<name>Unhandled Rejection|Uncaught Exception|Unhandled Error) ⎯+$", "heading"),
        ("vitest", r"^[ \t]+[✓√] (?P<name>.*?)(?: \d+m?s)?$", "pass"),
        ("vitest", r"^[ \t]+[×✗] (?P<name>.*?)(?: \d+m?s)?$", "fail"),
        ("vitest", r"^[ \t]+↓ (?P<name>.*?)(?: \[skipped\])?$", "skip"),
        ("node:test", r"^(?:Failed tests:|✖ failing tests:)$", "reports"),
        ("node:test", r"^[ \t]+'\d+ subtests? failed'$", "suite-failed"),
        ("node:test", r"^[ \t]*✔ (?P<name>.*?)(?: \([\d.]+m?s\))?$", "pass"),
        ("node:test", r"^[ \t]*✖ (?P<name>.*?)(?: \([\d.]+m?s\))?$", "fail"),
        ("node:test", r"^[ \t]*﹣ (?P<name>.*?)(?: \([\d.]+m?s\))?(?: # \w+.*)?$", "skip"),
        ("node:test", r"^[ \t]*ok \d+ - (?P<name>.*?) # (?:SKIP|TODO)\b", "skip"),
        ("node:test", r"^[ \t]*ok \d+ - (?P<name>.*)$", "pass"),
        ("node:test", r"^[ \t]*not ok \d+ - (?P<name>.*)$", "fail"),
    )
]
RULES = [re.compile(pattern) for _, pattern, _ in LINE_RULES]
# One pass of RE2 (a DFA over the UTF-8 bytes, without groups to fill) finds every line a rule matches, after an
# optional package prefix; Python's engine then tells which rule on that line alone (each rule a group, 2 + its
# index), and the rule's own pattern reads it.
_BODIES = [re.sub(r"\(\?P<\w+>", "(?:", pattern.removeprefix("^")) for _, pattern, _ in LINE_RULES]
FIND = re2.compile(("(?m)^(?:" + PREFIX.pattern.removeprefix("^") + ")?(?:" + "|".join(_BODIES) + ")").encode())
WHICH = re.compile("(" + PREFIX.pattern.removeprefix("^") + ")?(?:" + "|".join(f"({body})" for body in _BODIES) + ")")
PLACED = {"fail", "verbose", "progress", "dots", "heading", "reports", "internal"}  # kinds whose raw line is needed


SUMMARY_WORDS = {
    "pass": "passed",
    "passed": "passed",
    "flaky": "passed",
    "fail": "failed",
    "failed": "failed",
    "skipped": "skipped",
    "todo": "skipped",
    "did not run": "skipped",
}
PYTEST_TITLE = re.compile(r"^ERROR (?:at (?:setup|teardown) of |collecting )")


def same_test(name: str, title: str) -> bool:
    """Whether a report titled `title` is the one for the test named `name`: pytest titles a node id by what follows
    its file (a crashed xdist worker's test by its file), Jest and Vitest add the suites the test is in."""
    short = ".".join(name.split("::")[1:]) if "::" in name else name
    return title in (name, short, name.split("::")[0]) or title.endswith((f" › {name}", f" > {name}"))


class TestRuns:
    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        self.runner: str | None = None
        self._signed = False  # the runner was named by a signature line, not guessed from a test line
        self.first_failure: dict[str, object] | None = None  # {"raw_line": n, "name": …}
        self._failure_in = ""  # the package prefix of the first failure
        self._located = False  # its raw line is where its report begins, not (yet) the line that counted it
        self._vague = False  # it was named by its file only (pytest's progress): the first report there is its own
        self._runs: dict[str, _Run] = {}

    def counts(self) -> Counts:
        total = Counts()
        for run in self._runs.values():
            total.add(run.total())
        return total

    def summary(self) -> dict[str, object]:
        counts = self.counts()
        return {
            "runner": self.runner,
            "passed": counts.passed,
            "failed": counts.failed,
            "skipped": counts.skipped,
            "first_failure": self.first_failure,
        }

    def feed(self, text: str, first_raw_line: int) -> None:
        """Plain text of whole lines; `first_raw_line` is the raw line number of its first line."""
        data = text.encode()
        line_at, counted = 0, 0
        for match in FIND.finditer(data):
            start = match.start()
            end = data.find(b"\n", start)
            line = data[start : end if end >= 0 else len(data)].decode()
            which = WHICH.match(line)
            if which is None or which.lastindex is None:
                continue
            index = which.lastindex - 2  # group 1 is the prefix, then one group a rule (and no others)
            runner, _, kind = LINE_RULES[index]
            prefix = which.group(1) or ""
            found = RULES[index].match(line[len(prefix) :])
            if found is None:
                continue
            if kind in PLACED:
                line_at += data.count(b"\n", counted, start)
                counted = start
            self._line(
                prefix,
                runner,
                kind,
                {k: v for k, v in found.groupdict().items() if v is not None},
                first_raw_line + line_at,
            )

    def _line(self, prefix: str, runner: str, kind: str, match: dict[str, str], raw_line: int) -> None:
        run = self._runs.setdefault(prefix, _Run())
        if kind in ("signature", "start"):
            if not self._signed:
                self.runner, self._signed = runner, True
            if kind == "start":
                run.start(runner)
            run.runner = runner
        elif kind == "failure-name":
            self._rename(prefix, match["name"])
        elif kind == "reports":
            self._reports(run, runner, raw_line)
        elif kind == "heading" or (kind == "fail" and runner == "node:test" and run.reports):
            self._heading(prefix, run, runner, match["name"], raw_line)
        elif kind == "internal":
            if self.first_failure is None:
                self._first(prefix, raw_line, "INTERNALERROR", located=True)
        elif kind == "suite-failed":
            if run.reports == "dots" and run.live.failed:
                run.live.failed -= 1  # a suite whose tests failed had its own `X` among the dots
        elif kind == "dots":
            self._dots(prefix, run, match, raw_line)
        else:
            self.runner = self.runner or runner
            run.runner = run.runner or runner
            self._count(prefix, run, runner, kind, match, raw_line)

    def _count(self, prefix: str, run: _Run, runner: str, kind: str, match: dict[str, str], raw_line: int) -> None:
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
            self._one(prefix, run, outcome, match["name"], raw_line)
        elif kind == "progress":
            for char in match["dots"]:
                self._one(prefix, run, _outcome(char), match["name"], raw_line, vague=True)
        else:  # node:test's per-test line is the start of its report too (the error follows it)
            self._one(prefix, run, kind, match["name"], raw_line, located=runner == "node:test")

    def _one(
        self,
        prefix: str,
        run: _Run,
        outcome: str,
        name: str | None,
        raw_line: int,
        located: bool = False,
        vague: bool = False,
    ) -> None:
        if outcome == "pass":
            run.live.passed += 1
        elif outcome == "fail":
            run.live.failed += 1
            if self.first_failure is None and name is not None:
                self._first(prefix, raw_line, name, located, vague)
        else:
            run.live.skipped += 1

    def _dots(self, prefix: str, run: _Run, match: dict[str, str], raw_line: int) -> None:
        """A line of marks alone: pytest's progress (-q, xdist) in a pytest run or with its `[ 40%]`; else perhaps
        node:test's dot reporter, whose dots are kept apart until its "Failed tests:" shows they were."""
        dots = match["dots"]
        if "tail" in match or run.runner == "pytest":
            self.runner = self.runner or "pytest"
            run.runner = "pytest"
            for char in dots:
                self._one(prefix, run, _outcome(char), None, raw_line)  # unnamed: its report will name it
        elif set(dots) <= {".", "X"}:
            if run.dots is None or raw_line != run.dots_end + 1:
                run.dots = Counts()
            run.dots.passed += dots.count(".")  # skipped and todo tests are dots too
            run.dots.failed += dots.count("X")
            run.dots_end = raw_line

    def _reports(self, run: _Run, runner: str, raw_line: int) -> None:
        if runner == "pytest":
            run.runner, run.reports = "pytest", "pytest"
        elif run.dots is not None and raw_line == run.dots_end + 2:  # node:test's dots, a blank line, "Failed tests:"
            run.live.add(run.dots)
            run.dots, run.runner, run.reports = None, "node:test", "dots"
            self.runner = self.runner or "node:test"
        elif run.runner == "node:test" or self.runner == "node:test":  # spec's "✖ failing tests:"
            run.reports = "node:test"

    def _heading(self, prefix: str, run: _Run, runner: str, name: str, raw_line: int) -> None:
        """A failure's report begins: where the first failure's report is, or the first failure itself where its
        runner did not name it before (pytest's dots, collection errors and crashes, Playwright's line and dot
        reporters, Vitest's unhandled errors, node:test's dot reporter)."""
        if runner == "pytest":
            if run.reports != "pytest":
                return  # `___ name ___` is a report's heading only under FAILURES or ERRORS
            name = PYTEST_TITLE.sub("", name)
        failure = self.first_failure
        if failure is None:
            if run.runner == runner:  # in its runner's run (for pytest and node:test's dots, its section of reports)
                self._first(prefix, raw_line, name, located=True)
        elif self._located or prefix != self._failure_in:
            return
        elif same_test(str(failure["name"]), name) or (self._vague and runner == "pytest"):
            failure["raw_line"], self._located = raw_line, True
            if self._vague:
                failure["name"], self._vague = redact(name), False

    def _rename(self, prefix: str, name: str) -> None:
        """pytest's node id for the failure a report or progress line named by its title or file alone."""
        failure = self.first_failure
        if failure is None or prefix != self._failure_in or "::" in str(failure["name"]):
            return
        name = redact(name)
        if failure["name"] in (".".join(name.split("::")[1:]), name.split("::")[0]):
            failure["name"] = name

    def _first(self, prefix: str, raw_line: int, name: str, located: bool = False, vague: bool = False) -> None:
        self.first_failure = {"raw_line": raw_line, "name": redact(name.strip())}
        self._failure_in, self._located, self._vague = prefix, located, vague


def _outcome(mark: str) -> str:
    return "pass" if mark in ".X" else "fail" if mark in "FE" else "skip"


def failure_heading(name: str) -> re.Pattern[str]:
    """The line where a failing test's report begins (not the per-test line or the summary that names it), after a
    turbo or pnpm prefix: pytest's `____ TestX.test_y ____`, `____ ERROR at setup of test_x ____`, `____ ERROR
    collecting x.py ____` (and a crashed xdist worker's `____ x.py ____`), Jest's `● Suite › name`, Vitest's
    `FAIL  file > suite > name` and `⎯⎯ Unhandled Rejection ⎯⎯`, Playwright's `1) [chromium] › file:3:1 › name ──`,
    node:test's `not ok 3 - name` and `✖ name (1ms)`, pytest's first `INTERNALERROR>`."""
    short = re.escape(".".join(name.split("::")[1:]) if "::" in name else name)
    forms = [
        rf"_+ (?:ERROR at (?:setup|teardown) of |ERROR collecting )?{short} _+$",
        rf"\s*● (?:.* › )?{short}$",
        rf"\s*FAIL\s+(?:.* > )?{short}$",
        rf"⎯+ {short} ⎯+$",
        rf"\s*\d+\) {short}(?:\s+─+)?$",
        rf"\s*not ok \d+ - {short}$",
        rf"\s*✖ {short}(?: \([\d.]+m?s\))?$",
    ]
    if "::" in name:
        forms.append(rf"_+ {re.escape(name.split('::')[0])} _+$")
    if name == "INTERNALERROR":
        forms.append("INTERNALERROR>")
    return re.compile(f"^(?:{PREFIX.pattern.removeprefix('^')})?(?:{'|'.join(forms)})")
