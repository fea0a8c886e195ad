"""What is shown is what runs: text a requester supplied (a prompt, a question, an answer, a task's command, a session's
title, a name, a chat message) as every surface shows it. Nothing in it is interpreted: control characters become
their pictures (ESC `␛`, CR `␍`, BEL `␇`, DEL `␡`, the rest of C0 from the Control Pictures block), and C1 controls,
bidi overrides, isolates and marks, zero-width and other invisible format characters, line and paragraph separators
and lone surrogates become `⟨U+202E⟩`. Tab and newline stay. The room's app.js has the same function (`visible`);
tests/integration/test_visible_text.py checks the two agree.

Then each surface's own escaping, after `visible`: `markup` for a notification body (the markup of the freedesktop
Notifications spec), `menu_label` for a Qt menu (its `&` mnemonics, and dbusmenu's `_` ones when the tray is exported
over D-Bus). No Qt here: the CLI, the connectors and the GUI all use it."""

import re

# Cc but tab and newline; Cf (Unicode 15), Zl, Zp; surrogates (a JSON string may hold a lone one); every
# default-ignorable code point (variation selectors and Hangul fillers carry text no one sees: "emoji smuggling")
HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ud800-\udfff\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
NUL = "\x00"


def picture(char: str) -> str:
    """How one hidden character is shown."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"⟨U+{code:04X}⟩"


def visible(text: str) -> str:
    """The text with every character that would be interpreted or not be seen made visible."""
    return HIDDEN.sub(lambda found: picture(found.group()), text)


def one_line(text: str, width: int = 50) -> str:
    """The text's first line that holds anything, made visible and shortened to `width` with an ellipsis; when more
    lines follow, it says how many ('… 14 more lines')."""
    lines = visible(text).strip().split("\n")
    line = lines[0].rstrip()
    shown = line if len(line) <= width else line[: width - 1].rstrip() + "…"
    more = sum(1 for rest in lines[1:] if rest.strip())
    return shown + (f" … {more} more line{'s' if more != 1 else ''}" if more else "")


def markup(text: str) -> str:
    """Visible text for a notification body: the spec's markup (`<b>`, `<a href>`, …) and entities escaped, so a
    server that renders markup shows the characters themselves."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def menu_label(text: str, dbusmenu: bool = False) -> str:
    """Visible text for a Qt menu item, whose `&` marks a mnemonic (`&&` is one `&`). Over D-Bus (a
    StatusNotifierItem host: GNOME's AppIndicator, KDE) Qt hands the text to the shell as a dbusmenu label, turning
    only its first `&` into dbusmenu's mnemonic `_` and leaving every other character as it is, and the shell drops
    a lone `_`: there each `_` is doubled, and the first `&` is doubled so that Qt makes it `_&` (an `&` that is the
    access key); the rest stay single."""
    shown = visible(text)
    if not dbusmenu:
        return shown.replace("&", "&&")
    return shown.replace("_", "__").replace("&", "&&", 1)


def has_nul(text: str) -> bool:
    """A NUL byte cannot be passed to a program (argv and the environment end a string there)."""
    return NUL in text
