"""The console's fast path (issue 19, speed) shows exactly what the slow, obvious way shows: every pattern tried on
every line, each line cleaned and redacted on its own, one line at a time. Its triggers (desktop/console/triggers.py)
must be necessary conditions of their patterns: checked on the whole corpus and on variants of it (case, Unicode
spaces and the letters Python folds onto ASCII, other separators). No timing here: bench/console.py measures."""

import random
import subprocess
import sys
from collections.abc import Callable, Iterator, Set
from typing import TypeVar

import pytest

from desktop.console import ansi, redact, triggers
from desktop.console.ansi import strip_sgr
from desktop.console.redact import MARK, Redactor
from desktop.console.redact_rules import PATTERNS, PREFIX
from desktop.console.stream import MAX_LINE, ConsoleStream, _cut
from tests.redaction_corpus import BENIGN_CASES, CASES, KEY_BLOCKS, NEGATIVES, forms, positives
from tests.redaction_heldout import HELD_BENIGN, HELD_POSITIVES

Candidates = Callable[[str], Iterator[tuple[int, int, Set[int]]]]
T = TypeVar("T")


def _corpus() -> list[str]:
    """Every line of the corpus in every form it is tested in (coloured, after CI prefixes), and the key blocks."""
    texts = [line for line, _ in positives()] + list(NEGATIVES)
    for _, line, secret, kept in CASES + HELD_POSITIVES:
        texts += [shown for shown, _ in forms(line, secret, kept)]
    for _, line in BENIGN_CASES + HELD_BENIGN:
        texts += [shown for shown, _ in forms(line, line, ())]
    return texts


CORPUS = _corpus()
LINES = sorted({line for text in CORPUS for line in strip_sgr(text).split("\n")})
# what a variant changes: spaces for other spaces, letters Python's (?i) folds onto k, s and i, case, separators
SWAPS = [
    (" ", "\t"),
    (" ", "\u00a0"),
    (" ", "  "),
    (" ", "\u3000"),
    (" ", "\x1c"),
    ("k", "\u212a"),
    ("s", "\u017f"),
    ("i", "\u0131"),
    ("I", "\u0130"),
    ("=", " = "),
    (":", " : "),
    ("=", ": "),
    ("0", "\u0660"),
    ("a", "A"),
    ("E", "e"),
    ("e", "é"),
    ("-", "_"),
    ("_", "-"),
    ('"', "'"),
    ("t", "T"),
    ("T", "t"),
    ("p", "P"),
]


def _variants(lines: list[str], each: int, seed: int = 19) -> list[str]:
    rng = random.Random(seed)
    out = []
    for line in lines:
        for _ in range(each):
            varied = line
            for _ in range(rng.randrange(1, 4)):
                old, new = rng.choice(SWAPS)
                places = [i for i in range(len(varied)) if varied.startswith(old, i)]
                if places:
                    at = rng.choice(places)
                    varied = varied[:at] + new + varied[at + len(old) :]
            out.append(varied)
    return out


def _fired(line: str) -> set[int]:
    return {index for *_, ids in triggers.candidates(line) for index in ids}


@pytest.mark.parametrize("lines", [LINES, _variants(LINES, 6)], ids=["corpus", "variants"])
def test_a_pattern_that_matches_a_line_has_its_trigger_match_it(lines: list[str]) -> None:
    missed = []
    for line in lines:
        own = line[PREFIX.match(line).end() :]  # type: ignore[union-attr]  # PREFIX matches the empty string
        matched = {index for index, pattern in enumerate(PATTERNS) if pattern.search(own)}
        if matched - _fired(line):
            missed.append((line, sorted(matched - _fired(line))))
    assert not missed, f"{len(missed)} lines, e.g. {missed[:5]}"


BENIGN_LOOKING = [
    "export API_TOKEN=$API_TOKEN",
    "echo $CR_PAT | docker login -u ci --password-stdin",
    "Warning: Using --password via the CLI is insecure. Use --password-stdin.",
    "error: the --token flag requires a value",
    "SyntaxError: unexpected token: EOF (bundle.js:3:1)",
    "Parse error: unexpected token: '}'",
    "      password: ${{ secrets.DB_PASSWORD }}",
    'curl -H "Authorization: Bearer $TOKEN" https://api',
    "> Authorization: Bearer ${API_TOKEN}",
    "set -gx API_TOKEN $API_TOKEN",
    "GITHUB_TOKEN=***",
    "token_ttl: 3600s",
    'api_key = os.environ["API_KEY"]',
    "deploy_password: ${PASSWORD:?must be set}",
    "::add-mask::$DEPLOY_TOKEN",
    "TOKEN=`cat /run/secrets/deploy_token`",
    "kubectl create secret generic db --from-file=password=./secrets/db.txt",
    "fetched arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-k7nWKY",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
]


@pytest.mark.parametrize("line", BENIGN_LOOKING)
def test_a_credential_looking_line_runs_no_pattern(line: str) -> None:
    """The issue's benign lines match no pattern's trigger: no Python regex of redact_rules runs on them."""
    assert not _fired(line) & redact.ALL_PATTERNS
    assert redact.redact(line) == line


def _with(candidates: Candidates, work: Callable[[], T]) -> T:
    """`work` done with `candidates` standing in for the module's own."""
    fast, redact._candidates = redact._candidates, candidates
    try:
        return work()
    finally:
        redact._candidates = fast


@pytest.mark.parametrize("way", ["hyperscan", "re2"])
def test_redaction_equals_every_pattern_on_every_line(way: str) -> None:
    """Line by line and as whole blocks (where a key block spans lines). Hyperscan's way also on the variants; RE2's
    one trigger (the way without Hyperscan, as it was) holds on the corpus only: its `\\s` is ASCII's."""
    candidates = triggers.candidates if way == "hyperscan" else redact.trigger_lines
    texts = CORPUS + (_variants(LINES, 2, seed=5) if way == "hyperscan" else [])
    blocks = ["\n".join(texts[i : i + 40]) for i in range(0, len(texts), 40)]
    for text in texts + blocks:
        expected = _with(redact.every_line, lambda: redact.redact(text))  # noqa: B023 (called at once)
        assert _with(candidates, lambda: redact.redact(text)) == expected, text  # noqa: B023


def _reference(raw: bytes, colours: bool = True) -> list[tuple[str, int]]:
    """The console by the obvious way: decoded at once, then one line at a time, each cleaned, redacted with every
    pattern (a key block carries over from line to line in the Redactor), cut and folded."""
    text = raw.decode("utf-8", "replace")
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    redactor, shown = Redactor(), list[tuple[str, int]]()
    for line in lines:
        one = _with(redact.every_line, lambda: redactor.lines(ansi.clean_line(line)))  # noqa: B023 (called at once)
        one = one if colours else strip_sgr(one)
        one = _cut(one) if len(one) > MAX_LINE else one
        if shown and shown[-1][0] == one:
            shown[-1] = (one, shown[-1][1] + 1)
        else:
            shown.append((one, 1))
    return shown


def _streamed(raw: bytes, cuts: list[int], colours: bool = True) -> tuple[list[tuple[str, int]], ConsoleStream]:
    stream, lines = ConsoleStream(colours=colours), {}
    reads = [raw[start:end] for start, end in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    for data in reads:
        lines.update({line.index: line for line in stream.feed(data)})
    lines.update({line.index: line for line in stream.finish()})
    return [(line.text, line.count) for _, line in sorted(lines.items())], stream


def _console_log(seed: int) -> bytes:
    """The corpus as a terminal would write it: with progress bars, repeats, other escapes, CRLF, long lines and key
    blocks between its lines, and test output."""
    rng = random.Random(seed)
    extra = [
        "\rDownloading 10%\rDownloading 100%",
        "\x1b[2K\x1b[1G\x1b[32m⠋\x1b[0m fetching",
        "\x1b]0;title\x07build",
        "step 1 of 3\r\n",
        "\x1b[?25lhidden\x1b[?25h",
        "bell\x07 nul\x00",
        "waiting…",
        "waiting…",
        "waiting…",
        "tests/test_a.py::test_x \x1b[32mPASSED\x1b[0m",
        "tests/test_b.py .F.s",
        "  \r",
        "\x1b[31m" + "y" * 4300,
        "z" * (MAX_LINE + 10),
        "===== 2 passed, 1 failed in 0.1s =====",
        *KEY_BLOCKS,
        "-----BEGIN RSA PRIVATE KEY-----",
        "$ grep -rn 'PRIVATE KEY' .",
        "ok 1 - parses",
        "café ☃ ✓ ━━",
    ]
    lines = CORPUS + _variants(LINES, 1, seed=seed)
    rng.shuffle(lines)
    out = []
    for line in lines:
        out.append(line)
        if rng.random() < 0.3:
            out.append(rng.choice(extra))
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stream_in_reads_of_any_size_shows_what_the_line_by_line_way_shows(seed: int) -> None:
    """Reads cut anywhere: inside a secret, a line, a UTF-8 character, a key block; big reads and tiny ones."""
    raw = _console_log(seed)
    rng = random.Random(seed)
    small = sorted(rng.sample(range(1, len(raw)), len(raw) // 300))  # ~300 bytes a read
    big = sorted(rng.sample(range(1, len(raw)), 8))
    expected = _reference(raw)
    assert MARK in "".join(text for text, _ in expected) and any(count > 1 for _, count in expected)
    for cuts in (small, big, []):
        shown, _ = _streamed(raw, cuts)
        assert shown == expected
    plain, _ = _streamed(raw, small, colours=False)
    assert plain == _reference(raw, colours=False)


def test_a_secret_cut_by_every_read_boundary_is_still_redacted() -> None:
    line = "2026-11-30T10:00:01Z export OPENAI_API_KEY=\x1b[33msk-proj-Ab1Cd2Ef3Gh4Ab1Cd2Ef3Gh4Ab1Cd2\x1b[0m ✓"
    raw = f"before\n{line}\nafter\n".encode()
    expected = _reference(raw)
    assert expected[1][0] == f"2026-11-30T10:00:01Z export OPENAI_API_KEY=\x1b[33m{MARK}\x1b[0m ✓"
    for cut in range(1, len(raw)):
        assert _streamed(raw, [cut])[0] == expected


def test_the_test_counts_do_not_depend_on_the_reads() -> None:
    raw = _console_log(4)
    _, whole = _streamed(raw, [])
    _, pieces = _streamed(raw, sorted(random.Random(4).sample(range(1, len(raw)), 200)))
    assert whole.tests.summary() == pieces.tests.summary()
    assert whole.tests.counts().passed > 0


def test_the_cleaning_of_whole_reads_equals_the_cleaning_of_each_line() -> None:
    """ansi.clean over many lines, with and without the rarer controls (which take its slower way)."""
    rng = random.Random(7)
    atoms = [
        "a",
        " ",
        "\t",
        "\r",
        "\x1b[2K",
        "\x1b[G",
        "\x1b[1G",
        "\x1b[01G",
        "\x1b[31m",
        "\x1b[0m",
        "\x1b[38:2::1m",
        "\x1b]0;t\x07",
        "\x1b]8;;u\x1b\\",
        "\x1b]0;open",
        "\x1bP1q",
        "\x1b(B",
        "\x1b",
        "\x1b[",
        "\x1b[?25l",
        "✓",
    ]
    rare = ["\x07", "\x00", "\x08", "\x7f", "\x1c"]
    for n in range(3000):
        pool = atoms + rare if n % 2 else atoms
        text = "\n".join("".join(rng.choices(pool, k=rng.randrange(0, 9))) for _ in range(rng.randrange(1, 9)))
        lines = text.split("\n")
        plain = ansi.clean(text, lines)
        expected = [ansi.clean_line(line) for line in text.split("\n")]
        assert lines == expected, repr(text)
        assert plain == strip_sgr("\n".join(expected)), repr(text)


def test_without_hyperscan_the_console_still_works_and_says_so() -> None:
    """A platform without a wheel: the import fails, a warning is logged, the RE2 way redacts the same."""
    code = (
        "import logging, sys; sys.modules['hyperscan'] = None; logging.basicConfig(level=logging.WARNING)\n"
        "from desktop.console.stream import ConsoleStream\n"
        "from desktop.console import redact, triggers\n"
        "assert triggers.SCANNER() is None\n"
        "stream = ConsoleStream()\n"
        "lines = stream.feed(b'export API_TOKEN=f00ba5c0ffee1234\\n\\rDownloading 10%\\rdone\\nok\\n')\n"
        "print('|'.join(line.text for line in lines))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"export API_TOKEN={MARK}|done|ok"
    assert "without Hyperscan" in done.stderr


def test_hyperscan_is_loaded_at_the_first_read_not_at_start() -> None:
    """A daemon with nothing to read does not hold Hyperscan and its databases (bench/gui.py's idle memory)."""
    code = (
        "import sys\n"
        "import desktop.daemon\n"
        "from desktop.console.stream import ConsoleStream\n"
        "assert 'hyperscan' not in sys.modules, 'loaded at start'\n"
        "ConsoleStream().feed(b'export API_TOKEN=f00ba5c0ffee1234\\n')\n"
        "assert 'hyperscan' in sys.modules, 'not used at all'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
