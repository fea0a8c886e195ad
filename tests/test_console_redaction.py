"""Redaction over the corpus (tests/redaction_corpus.py): every secret goes, every benign line stays as it was,
also when colour codes sit around or inside a secret and when a secret arrives split across two reads."""

import pytest

from desktop.console.ansi import strip_sgr
from desktop.console.redact import MARK, Redactor, redact
from desktop.console.stream import ConsoleStream
from tests.redaction_corpus import NEGATIVES, TOKENS, positives

POSITIVES = positives()


def test_the_corpus_is_large() -> None:
    assert len(POSITIVES) >= 300 and len(NEGATIVES) >= len(POSITIVES)
    assert len(set(POSITIVES)) == len(POSITIVES) and len(set(NEGATIVES)) == len(NEGATIVES)


def test_no_secret_gets_through() -> None:
    through = [(line, secret) for line, secret in POSITIVES
               if secret in strip_sgr(redact(line)) or MARK not in redact(line)]
    assert not through, f"{len(through)} of {len(POSITIVES)} got through, e.g. {through[:5]}"


def test_no_benign_line_changes() -> None:
    changed = [(line, redact(line)) for line in NEGATIVES if redact(line) != line]
    assert not changed, f"{len(changed)} of {len(NEGATIVES)} changed, e.g. {changed[:5]}"


def test_only_the_secret_goes() -> None:
    assert redact("export API_TOKEN=f00ba5c0ffee1234 # for ci") == f"export API_TOKEN={MARK} # for ci"
    assert redact("cloning https://deploy:Xy9s3cr3t@git.example.com/r.git") == (
        f"cloning https://deploy:{MARK}@git.example.com/r.git")
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
    first = redactor.lines("start\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow")
    second = redactor.lines("IBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nnext")
    assert first.split("\n") == ["start", MARK, MARK]
    assert second.split("\n") == [MARK, MARK, MARK, "next"]


def test_every_token_category_is_in_the_corpus() -> None:
    assert {"github", "gitlab", "slack", "stripe", "openai", "anthropic", "google", "aws", "npm", "pypi",
            "jwt"} <= set(TOKENS)
