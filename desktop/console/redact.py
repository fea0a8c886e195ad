"""Secrets in console text become `[redacted]`: tokens and keys of the usual shapes, credentials in headers, URLs,
command lines and `NAME=value` pairs. References (`$API_TOKEN`, `${API_TOKEN}`, `$(cat ~/.token)`) stay as they are.

Each pattern names the secret part `s`; everything else in a match (a name, a flag, a scheme) stays. Matching runs
on the text without colour codes, so codes around or inside a secret cannot hide it; the codes inside a redacted span
are put back after the marker, so the colours after it stay right."""

import re

import re2  # type: ignore[import-untyped]

from desktop.console.ansi import SGR

MARK = "[redacted]"
_VALUE = r"""(?!["']?(?:\$|%\(|\{\{|<|\[redacted\]|\*{3}))"""  # not a reference, template, placeholder, or hidden
_NAME_END = r"(?![A-Za-z0-9])"
_SECRET_WORDS = (r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
                 r"|private[_-]?key|auth[_-]?key|client[_-]?secret|_pass|-pass|session[_-]?key)")
_CREDENTIAL = r"(?=[A-Za-z0-9._~+/=\-]*(?:[0-9+/=]|[a-z][A-Z]))"  # a credential, not a word: a digit or a hump
_TOKEN_CHARS = r"[A-Za-z0-9_\-]"

PATTERNS: list[re.Pattern[str]] = [re.compile(p, flags) for p, flags in (
    # private key blocks, whole (the stream carries an unfinished block over to the next lines)
    (r"(?P<s>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z))", 0),
    # tokens with a recognisable shape
    (r"(?<![A-Za-z0-9])(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})", 0),
    (r"(?<![A-Za-z0-9])(?P<s>gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|oas)-[A-Za-z0-9_\-]{20,})", 0),
    (r"(?<![A-Za-z0-9])(?P<s>xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})", 0),
    (r"(?<![A-Za-z0-9])(?P<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})", 0),
    (r"(?<![A-Za-z0-9_\-])(?P<s>sk-(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,})", 0),  # OpenAI, Anthropic (sk-ant-…)
    (r"(?<![A-Za-z0-9])(?P<s>AIza[0-9A-Za-z_\-]{35}|GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[0-9A-Za-z_\-]{20,})", 0),
    (r"(?<![A-Z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?![A-Z0-9])", 0),
    (r"(?<![A-Za-z0-9])(?P<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])", 0),
    (r"(?<![A-Za-z0-9])(?P<s>pypi-[A-Za-z0-9_\-]{50,})", 0),
    (r"(?<![A-Za-z0-9_\-])(?P<s>eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,})", 0),
    (r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{20,})", 0),
    # credentials in headers, addresses and command lines
    (r"\b(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z][A-Za-z0-9_\-]*\s+)?" + _VALUE + _CREDENTIAL
     + r"(?P<s>[^\s\"',;]{8,})", 0),
    (r"(?<![A-Za-z])(?:Bearer|Basic|bearer|basic|BEARER|BASIC)\s+" + _VALUE + _CREDENTIAL
     + r"(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)", 0),
    (r"://[^/\s:@\"'<>]*:" + _VALUE + r"(?P<s>[^/\s@\"'<>]+)@", 0),
    (r"[?&](?i:key|sig|signature|token|access_token|id_token|api_key|apikey|auth|client_secret|password"
     r"|x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential)=" + _VALUE + r"(?P<s>[^&\s#\"'<>]+)", 0),
    (r"(?i)--(?:password|passwd|token|secret|api-key|auth-token|access-token|client-secret)(?:=|\s+)"
     + _VALUE + r"(?!-)(?P<s>[^\s\"']+|\"[^\"]*\"|'[^']*')", 0),
    (r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s*)[\"']?[^\s:\"']+:" + _VALUE + r"(?P<s>[^\s\"']+)", 0),
    (r"\bmysql(?:dump|admin|sh)?\b[^\n]*?\s-p" + _VALUE + r"(?P<s>[^\s\"']+)", 0),
    (r"\bdocker\s+login\b[^\n]*?\s-p(?:=|\s+)" + _VALUE + r"(?P<s>\S+)", 0),
    (r"\bsshpass\s+-p\s*" + _VALUE + r"(?P<s>\S+)", 0),
    (r"\bredis-cli\b[^\n]*?\s-a\s+" + _VALUE + r"(?P<s>\S+)", 0),
    # NAME=value, name: value, "name": "value" for names that say what they hold
    (r"(?i)(?<![A-Za-z0-9])[A-Za-z0-9_.\-]*" + _SECRET_WORDS + _NAME_END + r"[\"']?\s*[:=]\s*[\"']?" + _VALUE
     + r"(?!(?:null|none|true|false|undefined)\b)(?![^\s\"',;&]*\()(?P<s>[^\s\"',;&]{3,})", 0),
    (r"(?i)aws[_.\-]?secret[_.\-]?access[_.\-]?key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})", 0),
    (r"(?i)secretaccesskey[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})", 0),
)]


KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")


class Redactor:
    """Redaction of a stream given as whole lines, read by read: a private key block may span reads."""

    def __init__(self) -> None:
        self._in_key = False

    def preview(self, line: str) -> str:
        """An unfinished line redacted as it would be, without moving the stream on (it is read again later)."""
        return MARK if self._in_key else redact(line)

    def lines(self, text: str, plain: str | None = None) -> str:
        """`text` (whole lines) redacted; `plain` is `text` without colour codes if the caller has it already."""
        head = ""
        if self._in_key:  # the rest of a key block that began in an earlier read
            end = KEY_END.search(text)
            cut = len(text) if end is None else end.end()
            head, text = _mark(text[:cut]), text[cut:]
            self._in_key, plain = end is None, None
            if end is None:
                return head
        begins = list(KEY_BEGIN.finditer(text))
        if begins and not KEY_END.search(text, begins[-1].end()):
            self._in_key = True
        return head + redact(text, plain)


# Something every secret above holds, found in one pass by RE2 (a DFA: its speed does not fall with the number of
# alternatives, which Python's engine cannot say). Only lines with a trigger go through the patterns.
TRIGGER = re2.compile(
    r"gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|oas)-|xox[abposre]-|xapp-|[sr]k_(?:live|test)_"
    r"|whsec_|sk-|AIza|GOCSPX-|ya29\.|(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}|npm_|pypi-|eyJ|hooks\.slack\.com"
    r"|(?i:authorization)|(?i:bearer|basic)\s|://[^/\s:@]*:[^/\s@]+@"
    r"|[?&](?i:key|sig|signature|token|access_token|id_token|api_key|apikey|auth|client_secret|password"
    r"|x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential)="
    r"|--(?i:password|passwd|token|secret|api-key|auth-token|access-token|client-secret)"
    r"|curl|mysql|docker\s+login|sshpass|redis-cli"
    r"|(?i:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|auth[_-]?key|client[_-]?secret|_pass|-pass|session[_-]?key)[\"']?\s*[:=]"
)


def spans(text: str) -> list[tuple[int, int]]:
    """The secret spans of `text`, merged, in order."""
    found: list[tuple[int, int]] = []
    if "PRIVATE KEY" in text:
        found += [(m.start("s"), m.end("s")) for m in PATTERNS[0].finditer(text)]
    line_end = -1
    for trigger in TRIGGER.finditer(text):
        if trigger.start() <= line_end:
            continue  # this line is done already
        line_start = text.rfind("\n", 0, trigger.start()) + 1
        line_end = text.find("\n", trigger.start())
        line_end = len(text) if line_end < 0 else line_end
        line = text[line_start:line_end]
        found += [(line_start + m.start("s"), line_start + m.end("s"))
                  for pattern in PATTERNS[1:] for m in pattern.finditer(line) if m.end("s") > m.start("s")]
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact(text: str, plain: str | None = None) -> str:
    """`text` with every secret replaced by `[redacted]`; colour codes may be anywhere in it."""
    if "\x1b" not in text:
        found = spans(text)
        return _replace(text, found) if found else text
    plain = SGR.sub("", text) if plain is None else plain
    found = spans(plain)
    if not found:
        return text
    # only the lines with a secret are taken apart; a key block is the one secret that spans lines
    lines, plain_lines = text.split("\n"), plain.split("\n")
    touched: dict[int, list[tuple[int, int]]] = {}
    index, counted = 0, 0  # the line of the last span's start, and where counting newlines stopped
    for start, end in found:
        index += plain.count("\n", counted, start)
        counted = start
        line_start = plain.rfind("\n", 0, start) + 1
        for number in range(index, index + plain.count("\n", start, end) + 1):
            touched.setdefault(number, []).append(
                (max(start - line_start, 0), min(end - line_start, len(plain_lines[number]))))
            line_start += len(plain_lines[number]) + 1
    for index, line_spans in touched.items():
        line, line_plain = lines[index], plain_lines[index]
        codes = list(SGR.finditer(line))
        lines[index] = _replace_around_codes(line, line_plain, codes, line_spans) if codes else _replace(
            line, line_spans)
    return "\n".join(lines)


def _mark(secret: str) -> str:
    """One marker per line the secret spans, so a redacted key block keeps its line count."""
    return "\n".join([MARK] * (secret.count("\n") + 1))


def _replace(text: str, found: list[tuple[int, int]]) -> str:
    parts, at = [], 0
    for start, end in found:
        parts += [text[at:start], _mark(text[start:end])]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _replace_around_codes(text: str, plain: str, codes: list[re.Match[str]], found: list[tuple[int, int]]) -> str:
    """Redact `found` (offsets in the text without codes) in `text`; codes inside a span follow its marker."""
    placed, removed = [], 0  # (offset in the plain text where the code sits, the code)
    for match in codes:
        placed.append((match.start() - removed, match.group()))
        removed += len(match.group())
    out: list[str] = []
    copied = shift = k = 0
    for start, end in found:
        while k < len(placed) and placed[k][0] <= start:
            shift += len(placed[k][1])
            k += 1
        out += [text[copied:start + shift], _mark(plain[start:end])]
        while k < len(placed) and placed[k][0] < end:
            out.append(placed[k][1])
            shift += len(placed[k][1])
            k += 1
        copied = end + shift
    out.append(text[copied:])
    return "".join(out)
