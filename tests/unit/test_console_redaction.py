"""Redaction over the corpus (tests/redaction_corpus.py): every secret goes, every benign line stays as it was,
also when colour codes sit around or inside a secret and when a secret arrives split across two reads."""

import time

import pytest

from desktop.console.ansi import strip_sgr
from desktop.console.redact import MARK, Redactor, redact
from desktop.console.stream import ConsoleStream
from tests.redaction_corpus import BENIGN_CASES, CASES, NEGATIVES, TOKENS, forms, positives
from tests.redaction_heldout import HELD_BENIGN, HELD_POSITIVES

POSITIVES = positives()
CATEGORIES = sorted({category for category, *_ in CASES})


def _expanded(cases: list[tuple[str, str, str, tuple[str, ...]]]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (category, shown, secret, kept)
        for category, line, secret, kept in cases
        for shown, _ in forms(line, secret, kept)
    ]


def _benign(cases: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(category, shown) for category, line in cases for shown, _ in forms(line, line, ())]


def _caught(line: str, secret: str, kept: tuple[str, ...]) -> bool:
    """The secret is gone, a marker stands in its place, and every word around it stays."""
    shown = strip_sgr(redact(line))
    return secret not in shown and MARK in shown and all(word in shown for word in kept)


def _rates(
    positives: list[tuple[str, str, str, tuple[str, ...]]], benign: list[tuple[str, str]]
) -> tuple[float, float, list[str], list[str]]:
    missed = [line for _, line, secret, kept in positives if not _caught(line, secret, kept)]
    changed = [line for _, line in benign if redact(line) != line]
    return 1 - len(missed) / len(positives), len(changed) / len(benign), missed, changed


def test_the_corpus_is_large() -> None:
    assert len(POSITIVES) >= 300 and len(NEGATIVES) >= len(POSITIVES)
    assert len(set(POSITIVES)) == len(POSITIVES) and len(set(NEGATIVES)) == len(NEGATIVES)


def test_no_secret_gets_through() -> None:
    through = [
        (line, secret) for line, secret in POSITIVES if secret in strip_sgr(redact(line)) or MARK not in redact(line)
    ]
    assert not through, f"{len(through)} of {len(POSITIVES)} got through, e.g. {through[:5]}"


def test_no_benign_line_changes() -> None:
    changed = [(line, redact(line)) for line in NEGATIVES if redact(line) != line]
    assert not changed, f"{len(changed)} of {len(NEGATIVES)} changed, e.g. {changed[:5]}"


def test_only_the_secret_goes() -> None:
    assert redact("export API_TOKEN=f00ba5c0ffee1234 # for ci") == f"export API_TOKEN={MARK} # for ci"
    assert redact("cloning https://deploy:Xy9s3cr3t@git.example.com/r.git") == (
        f"cloning https://deploy:{MARK}@git.example.com/r.git"
    )
    coloured = "\x1b[1mkey\x1b[0m \x1b[32mghp_A1b2C3d4E5\x1b[1mA1b2C3d4E5A1b2C3d4E5f6G7h8\x1b[0m!"
    assert redact(coloured) == f"\x1b[1mkey\x1b[0m \x1b[32m{MARK}\x1b[1m\x1b[0m!"  # the colours after it stay right


@pytest.mark.parametrize("line, secret", POSITIVES[::23])
def test_a_secret_split_across_two_reads(line: str, secret: str) -> None:
    stream = ConsoleStream()
    data = f"before\n{line}\nafter\n".encode()
    cut = data.index(secret[:4].encode()) + 3  # a few bytes into the secret
    shown = [entry.text for entry in stream.feed(data[:cut]) + stream.feed(data[cut:]) + stream.finish()]
    assert shown[0] == "before" and shown[-1] == "after"
    assert not any(secret in strip_sgr(text) for text in shown)


def test_a_key_block_across_reads_keeps_its_lines() -> None:
    redactor = Redactor()
    first = redactor.lines("start\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Lm2Qz9Xw4Tp1Rb8")
    second = redactor.lines("Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8\nabc+9Q==\n-----END RSA PRIVATE KEY-----\nnext")
    assert first.split("\n") == ["start", MARK, MARK]
    assert second.split("\n") == [MARK, MARK, MARK, "next"]


def test_every_token_category_is_in_the_corpus() -> None:
    assert {"github", "gitlab", "slack", "stripe", "openai", "anthropic", "google", "aws", "npm", "pypi", "jwt"} <= set(
        TOKENS
    )


def test_the_issue_19_corpus_covers_every_category_in_every_form() -> None:
    assert {"spaces", "short-flags", "spaces-in-value", "vendor", "url", "auth-scheme", "key-material"} <= set(
        CATEGORIES
    )
    assert len(_expanded(CASES)) >= 500 and len(_benign(BENIGN_CASES)) >= 400


@pytest.mark.parametrize("category", CATEGORIES)
def test_each_category_is_redacted_keeping_the_words_around_it(category: str) -> None:
    cases = [case for case in _expanded(CASES) if case[0] == category]
    missed = [(line, redact(line)) for _, line, secret, kept in cases if not _caught(line, secret, kept)]
    assert not missed, f"{len(missed)} of {len(cases)}: {missed[:4]}"


@pytest.mark.parametrize("category", sorted({category for category, _ in BENIGN_CASES}))
def test_each_kind_of_benign_line_stays(category: str) -> None:
    cases = [line for kind, line in _benign(BENIGN_CASES) if kind == category]
    changed = [(line, redact(line)) for line in cases if redact(line) != line]
    assert not changed, f"{len(changed)} of {len(cases)}: {changed[:4]}"


def test_the_issue_19_rates_over_the_whole_corpus() -> None:
    """The issue's target: at least 99% of credential lines redacted with their words kept, at most 1% of benign
    lines changed, over the tuned corpus and the held-back one together."""
    benign = _benign(BENIGN_CASES + HELD_BENIGN) + [("old", line) for line in NEGATIVES]
    caught, changed, missed, touched = _rates(_expanded(CASES + HELD_POSITIVES), benign)
    assert caught >= 0.99, f"{caught:.2%} caught; missed e.g. {missed[:4]}"
    assert changed <= 0.01, f"{changed:.2%} changed, e.g. {touched[:4]}"


def test_the_held_back_rates() -> None:
    """Lines the code was not tuned on (tests/redaction_heldout.py)."""
    caught, changed, missed, touched = _rates(_expanded(HELD_POSITIVES), _benign(HELD_BENIGN))
    assert caught >= 0.99, f"{caught:.2%} caught; missed e.g. {missed[:4]}"
    assert changed <= 0.01, f"{changed:.2%} changed, e.g. {touched[:4]}"


def test_a_key_header_without_its_end_does_not_blank_the_console() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Lm2Qz9Xw4Tp1Rb8Vn5K"
    grep = "config/old.pem:-----BEGIN RSA PRIVATE KEY-----\nnext: a normal line\nanother"
    assert redact(grep).split("\n") == ["config/old.pem:" + MARK, "next: a normal line", "another"]
    truncated = "-----BEGIN PRIVATE KEY-----\n" + f"{body}\n" * 3 + "$ echo done\ndone"
    assert redact(truncated).split("\n") == [MARK] * 4 + ["$ echo done", "done"]
    quoted = 'error: key "-----BEGIN EC PRIVATE KEY-----" has no end\nretrying'
    assert redact(quoted).split("\n")[1] == "retrying" and "has no end" in redact(quoted)


def test_a_key_block_ends_after_100_lines() -> None:
    body = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2"
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + f"{body}\n" * 150 + "tail"
    lines = redact(text).split("\n")
    assert lines[:101] == [MARK] * 101 and lines[101:] == [body] * 50 + ["tail"]
    redactor = Redactor()  # the same bound when the block comes a few lines a read
    shown = redactor.lines("-----BEGIN OPENSSH PRIVATE KEY-----").split("\n")
    for _ in range(30):
        shown += redactor.lines("\n".join([body] * 5)).split("\n")
    assert shown[:101] == [MARK] * 101 and shown[101:] == [body] * 50


def test_a_key_block_across_reads_ends_at_a_normal_line() -> None:
    redactor = Redactor()
    assert redactor.lines("grep -r 'BEGIN' .\n./a.pem:-----BEGIN PRIVATE KEY-----").split("\n")[1] == "./a.pem:" + MARK
    assert redactor.lines("./b.txt: nothing here\n$ ls") == "./b.txt: nothing here\n$ ls"


def test_a_long_hostile_line_is_redacted_in_linear_time() -> None:
    lines = [
        "password: x" + " " * 4500 + "y",
        "password: " + "ab " * 1500,
        "https://u:" + "a@" * 2200 + "/",
        "setenv " + "TOKEN " * 750,
        "-----BEGIN PRIVATE KEY-----" + "\\n" * 2000 + " x",
        "conn;Password=" + "a " * 2200,
    ]
    started = time.perf_counter()
    for line in lines:
        redact(line)
    assert time.perf_counter() - started < 1.0  # each takes a few milliseconds; a quadratic pattern took seconds


def test_the_console_shows_the_lines_after_a_lone_key_header() -> None:
    stream = ConsoleStream()
    data = b"$ grep -rn 'PRIVATE KEY' .\n./old.pem:1:-----BEGIN RSA PRIVATE KEY-----\n./notes.md:3:rotate it\n$ ls\n"
    shown = [line.text for line in stream.feed(data[:60]) + stream.feed(data[60:]) + stream.finish()]
    assert shown == ["$ grep -rn 'PRIVATE KEY' .", f"./old.pem:1:{MARK}", "./notes.md:3:rotate it", "$ ls"]
