"""The console pipeline over bytes as a terminal would get them: what stays, what goes, what is folded, and that
hostile output cannot make it grow without bound."""

import subprocess
import sys
import tracemalloc

from desktop.console.stream import CUT, MAX_LINE, ConsoleStream, Line


def render(*reads: bytes) -> list[tuple[str, int]]:
    stream = ConsoleStream()
    lines: dict[int, Line] = {}
    for data in reads:
        lines.update({line.index: line for line in stream.feed(data)})
    lines.update({line.index: line for line in stream.finish()})
    return [(line.text, line.count) for line in sorted(lines.values(), key=lambda line: line.index)]


def test_colours_stay() -> None:
    coloured = [
        "\x1b[31mred\x1b[0m",
        "\x1b[38;5;208morange\x1b[39m",
        "\x1b[38;2;10;20;30mtrue\x1b[0m",
        "\x1b[1mbold\x1b[22m",
        "\x1b[7minverse\x1b[27m back",
        "\x1b[48;5;17;38;5;231mboth\x1b[m",
    ]
    assert render("\n".join(coloured).encode()) == [(line, 1) for line in coloured]


def test_other_controls_go() -> None:
    raw = (
        b"\x1b]0;window title\x07title gone\n"
        b"see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\ here\n"
        b"bell\x07 and nul\x00 gone\n"
        b"\x1b[2A\x1b[10;5Hcursor moves gone\x1b[K\n"
        b"\x1b[?25lhidden cursor\x1b[?25h\n"
        b"text then \x1b]0;an unterminated title"
    )
    assert [text for text, _ in render(raw)] == [
        "title gone",
        "see the docs here",
        "bell and nul gone",
        "cursor moves gone",
        "hidden cursor",
        "text then ",
    ]


def test_redrawn_lines_keep_their_final_state() -> None:
    raw = (
        b"Downloading 10%\rDownloading 55%\rDownloading 100%\n"
        b"\x1b[2K\rstep 1/3\x1b[2K\rstep 3/3\n"
        b"building...\r\n"
        b"\x1b[32m[====      ]\x1b[0m\r\x1b[32m[==========]\x1b[0m done\n"
    )
    assert [text for text, _ in render(raw)] == [
        "Downloading 100%",
        "step 3/3",
        "building...",
        "\x1b[32m[==========]\x1b[0m done",
    ]


def test_repeated_lines_fold_with_a_count() -> None:
    assert render(b"waiting\n" * 5 + b"ready\n" + b"waiting\n" * 2) == [("waiting", 5), ("ready", 1), ("waiting", 2)]
    assert render(b"tick\n", b"tick\n", b"tick") == [("tick", 3)]  # also across reads, and without a last newline


def test_long_lines_are_cut() -> None:
    [(text, _)] = render(b"x" * 10_000 + b"\n")
    assert text == "x" * MAX_LINE + CUT
    [(coloured, _)] = render(b"\x1b[31m" + b"y" * (MAX_LINE - 3) + b"\x1b[0mzzzz\n")
    assert "\x1b[" not in coloured[-10:] and coloured.endswith(CUT)  # no colour code cut in half


def test_invalid_utf8_is_shown_not_dropped() -> None:
    assert render(b"caf\xe9 \xff\xfe ok\n") == [("caf\ufffd \ufffd\ufffd ok", 1)]
    snowman = "☃".encode()
    assert render(b"a " + snowman[:1], snowman[1:] + b" b\n") == [("a ☃ b", 1)]  # a character split across reads


def test_raw_line_numbers_count_newlines() -> None:
    stream = ConsoleStream()
    lines = stream.feed(b"one\ntwo\ntwo\nthree\n")
    assert [(line.text, line.raw_line) for line in lines] == [("one", 1), ("two", 2), ("three", 4)]


def test_the_unfinished_line_shows_as_it_is_now() -> None:
    stream = ConsoleStream()
    assert stream.feed(b"done\nprogress 10%\rprogress 40%") == [Line(0, "done", 1)]
    assert stream.pending() == "progress 40%"


def test_a_100_mb_line_without_a_newline_stays_small() -> None:
    stream = ConsoleStream()
    chunk = b"A" * 1_000_000
    tracemalloc.start()
    try:
        for _ in range(100):
            assert stream.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000, f"peak {peak:,} bytes"
    [line] = stream.finish()
    assert line.text == "A" * MAX_LINE + CUT


def test_a_carriage_return_storm_keeps_the_last_state() -> None:
    stream = ConsoleStream()
    for n in range(200_000):
        stream.feed(f"\rprogress {n}".encode())
    assert stream.pending() == "progress 199999"
    assert [line.text for line in stream.finish()] == ["progress 199999"]


def test_a_million_identical_lines_are_one() -> None:
    stream = ConsoleStream()
    chunk = b"same old line\n" * 10_000
    for _ in range(100):
        changed = stream.feed(chunk)
        assert len(changed) == 1
    assert (changed[0].index, changed[0].count) == (0, 1_000_000)


def test_cox_console_render_and_redact() -> None:
    raw = b"\x1b[32mok\x1b[0m\nsame\nsame\nsame\ntoken=abcdef123456\n10%\r100%"
    coloured = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "console", "render"], input=raw, capture_output=True, check=True
    ).stdout.decode()
    assert coloured.splitlines() == ["\x1b[32mok\x1b[0m", "same  ×3", "token=[redacted]", "100%"]
    plain = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "console", "render", "--plain"],
        input=raw,
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert plain.splitlines()[0] == "ok"
    redacted = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "console", "redact"], input=raw, capture_output=True, check=True
    ).stdout
    assert redacted == raw.replace(b"abcdef123456", b"[redacted]")  # nothing but the secret changes


def test_looking_at_the_unfinished_line_counts_nothing() -> None:
    stream = ConsoleStream()
    stream.feed(b"tests/test_a.py ..F")
    assert stream.pending() == stream.pending() == "tests/test_a.py ..F"
    stream.feed(b"\n")
    assert (stream.tests.counts().passed, stream.tests.counts().failed) == (2, 1)
