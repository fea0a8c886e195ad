"""Secrets in console text become `[redacted]`: tokens and keys of the usual shapes, credentials in headers, URLs,
command lines, `NAME=value` and `NAME value` pairs, values with spaces (YAML, quoted, XML, connection strings), and
private keys. References (`$API_TOKEN`, `${API_TOKEN}`, `%API_TOKEN%`, `$(cat ~/.token)`) stay as they are.

A key block ends at its END line, at the first line that cannot be part of a PEM body, or after MAX_KEY_LINES, so a
header quoted alone (a grep result, a truncated file, an error) never blanks the rest of the console.

Each pattern names the secret part `s`; everything else in a match (a name, a flag, a scheme) stays. Matching runs
on the text without colour codes, so codes around or inside a secret cannot hide it; the codes inside a redacted span
are put back after the marker, so the colours after it stay right."""

import re

import re2  # type: ignore[import-untyped]

from desktop.console.ansi import SGR

MARK = "[redacted]"
# not a reference (`$X`, `\${X}`, `%X%`, `` `cmd` ``), template, placeholder, or a value shown hidden already
_VALUE = r"""(?!["']?(?:\$|\\\$|%\(|%\w+%|\{\{|<|`|…|\[redacted\]|\*{3}))(?![^\s"']*(?:\*{3}|•{3}))"""
_NAME_END = r"(?![A-Za-z0-9])"
_SECRET_WORDS = (r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
                 r"|private[_-]?key|auth[_-]?key|client[_-]?secret|_pass|-pass|session[_-]?key|account[_-]?key"
                 r"|app(?:lication)?[_-]?key|_auth|client[_-]key[_-]data|secret[_-]key[_-]base|[_-]pat)")
_CREDENTIAL = r"(?=[A-Za-z0-9._~+/=\-]*(?:[0-9+/=]|[a-z][A-Z]))"  # a credential, not a word: a digit or a hump
_TOKEN_CHARS = r"[A-Za-z0-9_\-]"
# a value that is not one: a boolean or nothing, a call, a path
_NOT_A_VALUE = (r"(?!(?:null|none|nil|true|false|undefined)\b)(?![^\s\"',;&]*[(\[])(?!\.{1,2}/|~/)(?!process\.env\.)"
                r"(?-i:(?![A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9](?:[\s\"',;)]|$)))")  # a variable's name: "GITHUB_TOKEN"
# in code, a keyword argument passed on: `token=bot_token`
_NOT_A_NAME = r"(?-i:(?![a-z_.]*(?:token|secret|password|key)[a-z_.]*(?:[,;)&]|$)))"
# prose, not a pass phrase: `passwd: password updated successfully`, `password: must be at least 12 characters`
_PROSE = (r"(?![^#\n]*\b(?:must|be|is|are|was|were|has|have|not|no|the|at|to|for|of|with|updated|successfully"
          r"|required|missing|invalid|expired|changed|failed|set|found|see|please|enter|use)\b)")
# what a value that may hold spaces runs to: the end of the line, before a comment or a closing comma
_TO_THE_END = r"(?P<s>[^\s\"'#][^\s#]*(?:[ \t]+[^\s#]+)*)(?=\s*(?:#.*)?$)"  # words and spaces: linear
# quoted, and not the name of a variable that holds it (`"token": "GITHUB_TOKEN"`) or a label (`"Gemini (CLI)"`)
_QUOTED = (r"""(?-i:(?!["'][A-Z][A-Z0-9]*_[A-Z0-9_]+["'])(?!["'][a-z_.]*(?:token|secret|password|key)[a-z_.]*["']))"""
           r"""(?!["'][^"'\n]* \()"""
           r"""(?:"(?P<s>[^"\n]{3,})"|'(?P<s2>[^'\n]{3,})')""")
_FLAG_VALUE = r"""(?:"(?P<s>[^"\n]+)"|'(?P<s2>[^'\n]+)'|(?P<s3>[^\s"']+))"""
_BLOCK_HEADS = ("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS", "LS0tLS1CRUdJTiBQVUJMSUMgS0VZ", "LS0tLS1CRUdJTiBQR1AgUFVCTElD",
                "LS0tLS1CRUdJTiBYNTA5", "LS0tLS1CRUdJTiBTU0gyIFBVQkxJQy", "LS0tLS1CRUdJTiBORVcgQ0VSVElGSUNBVE")

# tokens with a recognisable shape, one alternative each (a token is the whole match), searched as one pattern
_SHAPES = [
    r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
    r"(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|oas)-[A-Za-z0-9_\-]{20,}",
    r"(?<![A-Za-z0-9])(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})",
    r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})",
    r"(?<![A-Za-z0-9_\-])sk-(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,}",  # OpenAI, Anthropic (sk-ant-…)
    r"(?<![A-Za-z0-9])(?:AIza[0-9A-Za-z_\-]{35}|GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[0-9A-Za-z_\-]{20,})",
    r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])",
    r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    r"(?<![A-Za-z0-9])pypi-[A-Za-z0-9_\-]{50,}",
    r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}",
    # Vault, Postman, Docker Hub, SendGrid, New Relic
    r"(?<![A-Za-z0-9])(?:hv[sbr]\.[A-Za-z0-9_\-]{20,}|PMAK-[0-9a-fA-F]{24}-[0-9a-fA-F]{34}"
    r"|dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}|SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}|NRAK-[A-Z0-9]{27})",
    # an Azure client secret: three characters, a digit, `Q~`, then 31 to 40 more (34 in those issued today)
    r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,40}(?![A-Za-z0-9_~.\-])",
    # key material without a name: a PEM block in base64 (not a certificate or a public key)
    r"LS0tLS1CRUdJTi(?!" + "|".join(head[len("LS0tLS1CRUdJTi"):] for head in _BLOCK_HEADS)
    + r")[A-Za-z0-9+/]{8,}={0,2}",
]

PATTERNS: list[re.Pattern[str]] = [re.compile(p, flags) for p, flags in (
    ("(?P<s>" + "|".join(f"(?:{shape})" for shape in _SHAPES) + ")", 0),
    (r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{20,})", 0),
    # a credentials.csv row: the secret beside an access key ID, and the console password before it
    (r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16},(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", 0),
    (r"^[^,\s]+,(?P<s>[^,\n]+),(?:AKIA|ASIA)[0-9A-Z]{16},", 0),
    # GitHub Actions' mask command shows the value it masks
    (r"::add-mask::" + _VALUE + r"(?P<s>\S.*?)\s*$", 0),
    # credentials in headers, addresses and command lines
    (r"\b(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?!(?:AWS4-HMAC-SHA256|Digest)\s)(?:[A-Za-z][A-Za-z0-9_\-]*\s+)?"
     + _VALUE + _CREDENTIAL + r"(?P<s>[^\s\"',;]{8,})", 0),
    (r"(?<![A-Za-z])(?:Bearer|Basic|bearer|basic|BEARER|BASIC)\s+" + _VALUE + _CREDENTIAL
     + r"(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)", 0),
    (r"\bSignature=(?P<s>[0-9a-fA-F]{32,})", 0),  # AWS Signature Version 4
    (r"\b(?i:response)=\"(?P<s>[0-9a-fA-F]{16,})\"", 0),  # HTTP Digest
    # userinfo in an address: the password runs to the last `@` before the host, as curl reads it
    (r"://[^/\s:@\"'<>]*:" + _VALUE + r"(?P<s>[^/\s\"'<>]+)@(?=[^@/\s\"'<>]*(?:[/\s\"'<>?#]|$))", 0),
    (r"[?&](?i:key|sig|signature|token|access_token|refresh_token|id_token|api_key|api-key|apikey|auth|client_secret"
     r"|password|passwd|pwd|secret|code|appid|app_id|app_key|x-amz-signature|x-amz-credential|x-amz-security-token"
     r"|x-goog-signature|x-goog-credential)=" + _VALUE + r"(?P<s>[^&\s#\"'<>]+)", 0),
    # flags: --password VALUE, --auth=VALUE, --registration-token VALUE, --with-api-key VALUE, --pass VALUE
    (r"(?i)(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|auth|account-key|access-key"
     r"|secret-key|private-key)(?![\w-])(?:=|\s+(?![a-z]+(?:\s|$)))" + _VALUE + _NOT_A_VALUE + r"(?!-)"
     + _FLAG_VALUE, 0),
    (r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s*)[\"']?[^\s:\"']*:" + _VALUE + r"(?P<s>[^\s\"']+)", 0),
    (r"\b(?:mysql(?:dump|admin|sh)?|mariadb(?:-dump|-admin)?)\b[^\n]*?\s-p" + _VALUE + _FLAG_VALUE, 0),
    (r"\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm\s+registry)\s+login\b[^\n]*?\s-p(?:=|\s+)" + _VALUE
     + _FLAG_VALUE, 0),
    (r"\bsshpass\s+-p\s*" + _VALUE + r"(?P<s>\S+)", 0),
    (r"\bredis-cli\b[^\n]*?\s-a\s+" + _VALUE + _FLAG_VALUE, 0),
    # NAME VALUE after a command that sets one: fish's `set -gx`, csh's `setenv`, `aws configure set`, rclone
    (r"(?i)(?:\bset\s+-[A-Za-z]+|\bsetenv|\bconfig(?:ure)?\s+set)\s+[^\s=]*?" + _SECRET_WORDS + r"[\w\-]*\s+" + _VALUE
     + _NOT_A_VALUE + _FLAG_VALUE, 0),
    (r"\brclone\s+config\s+(?:create|update)\b[^\n]*?\s(?:secret_access_key|key|pass|password|token|client_secret"
     r"|account_key|sas_url|bearer_token)\s+" + _VALUE + _NOT_A_VALUE + r"(?P<s>\S+)", 0),
    (r"\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+" + _VALUE + r"(?P<s>\S+)", 0),  # user, password
    # a session cookie, and .NET's <add key="ApiKey" value="…"/>
    (r"(?i)\b(?:set-)?cookie:\s*(?:[^=\s;]+=[^;\s]*;\s*)*?[^=\s;]*(?:sess|sid|auth|token)[^=\s;]*=" + _VALUE
     + r"(?P<s>[^;\s]{8,})", 0),
    (r"(?i)\bkey=\"[\w.:\-]*" + _SECRET_WORDS + r"[\w.:\-]*\"\s+value=\"" + _VALUE + r"(?P<s>[^\"\n]+)\"", 0),
    # a two-column table (`vault login`): `token    hvs.…`
    (r"^(?i:token|password|secret|client_token|secret_id)\s{2,}" + _VALUE + _CREDENTIAL + r"(?P<s>\S{8,})\s*$", 0),
    # a literal default of a secret's variable is the secret: ${TOKEN:-ghp_…}
    (r"(?i)\$\{[A-Za-z0-9_]*" + _SECRET_WORDS + r"[A-Za-z0-9_]*:?[-=]" + _VALUE + r"(?P<s>[^}\s\"'`]+)\}", 0),
    # values that may hold spaces: YAML, quoted, XML, connection strings
    (r"(?i)^(?:[\"']|:)?[A-Za-z0-9_.\-]*" + _SECRET_WORDS + _NAME_END + r"[\"']?\s*:\s+" + _VALUE + _NOT_A_VALUE
     + _PROSE + r"(?![\[{|>])(?![^#\n]*[(){}\[\]=])" + _TO_THE_END, 0),  # not code: `token: str = Field(…)`
    (r"(?i)(?<![A-Za-z0-9_.\-/])(?<!\d:)[A-Za-z0-9_.\-]*" + _SECRET_WORDS + _NAME_END
     + r"[\"']?\s*(?:[:=]|=>)\s*" + _VALUE + _QUOTED, 0),
    (r"(?i)<([A-Za-z_:\-]*" + _SECRET_WORDS + r")>" + _VALUE + r"(?P<s>[^<\n]+)</\1>", 0),
    (r"(?i)(?:^|;)\s*(?:password|pwd)\s*=\s*" + _VALUE + r"(?P<s>[^;\n\"']*[^;\s\"'])(?=\s*;)", 0),
    # NAME=value, name: value, "name": "value" for names that say what they hold
    (r"(?i)(?<![A-Za-z0-9_.\-/])(?<!\d:)(?<!\$\{)[A-Za-z0-9_.\-]*" + _SECRET_WORDS + _NAME_END
     + r"[\"']?(?:\s*=>?|\s*:(?!\s*[A-Za-z]+(?:[\s\"',;&.)\]|]|$)))\s*[\"']?" + _VALUE + _NOT_A_VALUE + _NOT_A_NAME
     + r"(?P<s>[^\s\"',;&]{3,})", 0),
    (r"(?i)aws[_.\-]?secret[_.\-]?access[_.\-]?key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})", 0),
    (r"(?i)secretaccesskey[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})", 0),
)]
_GROUPS = [[name for name in pattern.groupindex if name.startswith("s")] for pattern in PATTERNS]

# where a log line's own words begin: after CI timestamps, `##[group]`, `::debug::`, a shell prompt, a list dash
PREFIX = re.compile(r"(?:\s*(?:\d{4}-\d\d-\d\d[T ][\d:.,]+Z?|##\[\w+\]|::(?:debug|notice|warning|error|group)"
                    r"(?: [^:\n]*)?::|\[[\w .:/@\-]{1,40}\]|\d\d:\d\d:\d\d[\d.,]*|[|$+>#]|-(?=\s)))*\s*")

KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
# where a key block starts: its header, or a DER key body in base64 printed without one (PKCS#8, PKCS#1, SEC1)
KEY_START = re.compile(r"(?P<begin>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----)[A-Za-z0-9+/=\\]*"
                       r"|(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{3}(?:IBA|BOBgkqhkiG9w0BBQ0w)|MIG[A-Za-z0-9+/]AgEA"
                       r"|MHcCAQEE)[A-Za-z0-9+/]{16,}={0,2}")
KEY_FIRST = ("-----BEGIN", "MII", "MIG", "MHcCAQEE")
# what may follow a key's start on its line for the block to go on to the next lines: more of the body
BODY_REST = re.compile(r"(?:[\s\"',]|\\[nr]|[A-Za-z0-9+/=]{16,})*")
# a line that can be inside a key block: base64 (long, or with a digit or symbol), a PEM header, or nothing
PEM_LINE = re.compile(PREFIX.pattern + r"(?:(?=[A-Za-z0-9+/]{20}|[A-Za-z]*[0-9+/=])[A-Za-z0-9+/]+={0,2}"
                      r"|Proc-Type: [\w,]+|DEK-Info: [\w,\-]+|Comment: .*)?[\s\"',\\]*")
MAX_KEY_LINES = 100  # a block with no END ends after this many lines


def _block_end(text: str, at: int, taken: int) -> tuple[int, int | None]:
    """A key block that goes on after `at` (where a line of it ends; -1 before the text), `taken` lines in: where
    it ends, and None, or the end of the text and the lines it has taken if the text ends first."""
    while at < len(text):
        if taken >= MAX_KEY_LINES:
            return at, None
        start = at + 1
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        end = KEY_END.search(text, start, line_end)
        if end is not None:
            return end.end(), None
        if not PEM_LINE.fullmatch(text, start, line_end):
            return at, None
        taken, at = taken + 1, line_end
    return at, taken


def _next_key_start(text: str, at: int) -> re.Match[str] | None:
    """KEY_START.search, from what each start begins with (str.find is many times faster than the pattern's scan)."""
    while True:
        found = [place for place in (text.find(first, at) for first in KEY_FIRST) if place >= 0]
        if not found:
            return None
        at = min(found)
        if (start := KEY_START.match(text, at)) is not None:
            return start
        at += 1


def _key_spans(text: str, found: list[tuple[int, int]]) -> int | None:
    """Adds the key blocks of `text` to `found`; the lines taken by one still open at the end of the text, if any."""
    at = 0
    while (start := _next_key_start(text, at)) is not None:
        line_end = text.find("\n", start.end())
        line_end = len(text) if line_end < 0 else line_end
        header = start.group("begin") is not None
        end_match = KEY_END.search(text, start.end(), line_end) if header else None
        if end_match is not None:
            found.append((start.start(), end_match.end()))
            at = end_match.end()
        elif not BODY_REST.fullmatch(text, start.end(), line_end):  # words follow (an error quoting a header)
            found.append((start.start(), start.end()))
            at = start.end()
        else:
            end, still_open = _block_end(text, line_end, 0 if header else 1)
            found.append((start.start(), max(end, line_end)))
            if still_open is not None:
                return still_open
            at = max(end, line_end)
    return None


# an Azure storage or Service Bus key: 64 bytes in base64, wherever it stands (not an npm sha512 integrity hash).
# Found from its `==` and looked at backwards: a long counted repetition in the trigger would slow every line down.
PADDED_KEY = re.compile(r"==(?<=(?<![A-Za-z0-9+/])(?<!sha512-)[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])")


class Redactor:
    """Redaction of a stream given as whole lines, read by read: a private key block may span reads."""

    def __init__(self) -> None:
        self._key_lines: int | None = None  # lines into a key block that is still going on

    def preview(self, line: str) -> str:
        """An unfinished line redacted as it would be, without moving the stream on (it is read again later)."""
        if self._key_lines is not None and (PEM_LINE.fullmatch(SGR.sub("", line)) or KEY_END.search(line)):
            return MARK
        return redact(line)

    def lines(self, text: str, plain: str | None = None) -> str:
        """`text` (whole lines) redacted; `plain` is `text` without colour codes if the caller has it already."""
        head: list[str] = []
        if self._key_lines is not None:  # the rest of a key block that began in an earlier read
            plain = SGR.sub("", text) if plain is None else plain
            end, self._key_lines = _block_end(plain, -1, self._key_lines)
            if self._key_lines is not None:
                return _mark(text)
            lines = text.split("\n")
            taken = plain.count("\n", 0, end) + 1 if end >= 0 else 0
            head = [MARK] * taken
            if taken and end < len(plain) and plain[end] != "\n":  # it ended at an END inside a line
                cut = KEY_END.search(lines[taken - 1])
                head[-1] = MARK + (redact(lines[taken - 1][cut.end():]) if cut is not None else "")
            if taken == len(lines):
                return "\n".join(head)
            text, plain = "\n".join(lines[taken:]), None
        if plain is None:
            plain = SGR.sub("", text) if "\x1b" in text else text
        found, self._key_lines = _spans(plain)
        shown = _redact(text, plain, found)
        return "\n".join([*head, shown]) if head else shown


# Something every secret above holds, found in one pass by RE2 (a DFA: its speed does not fall with the number of
# alternatives, which Python's engine cannot say). Only lines with a trigger go through the patterns.
TRIGGER = re2.compile(
    r"gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|oas)-|xox[abposre]-|xapp-|[sr]k_(?:live|test)_"
    r"|whsec_|sk-|AIza|GOCSPX-|ya29\.|(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}|npm_|pypi-|eyJ|hooks\.slack\.com"
    r"|hv[sbr]\.|PMAK-|dckr_|SG\.|NRAK-|\dQ~|LS0tLS1CRUdJTi|::add-mask::"
    r"|(?i:authorization)|(?i:bearer|basic)\s|Signature=|(?i:response)=\"|://[^/\s:@]*:[^/\s]+@"
    r"|[?&](?i:key|sig|signature|token|access_token|refresh_token|id_token|api_key|api-key|apikey|auth|client_secret"
    r"|password|passwd|pwd|secret|code|appid|app_id|app_key|x-amz-signature|x-amz-credential|x-amz-security-token"
    r"|x-goog-signature|x-goog-credential)="
    r"|--(?i:[a-z0-9\-]*(?:pass|token|secret|api-?key|auth|account-key|access-key|secret-key|private-key))"
    r"|curl|mysql|mariadb|login|sshpass|redis-cli|\bset\s+-|setenv|config(?:ure)?\s+set|rclone|htpasswd|(?i:cookie:|key=\")"
    r"|(?i:token|password|secret|client_token|secret_id)\s\s+\S|\$\{"
    r"|(?i:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|auth[_-]?key|client[_-]?secret|_pass|-pass|session[_-]?key|account[_-]?key"
    r"|app(?:lication)?[_-]?key|_auth|client[_-]key[_-]data|secret[_-]key[_-]base|[_-]pat)(?:[\"']?\s*(?:[:=]|=>)|>)"
    r"|(?i:pwd)\s*="
)


def spans(text: str) -> list[tuple[int, int]]:
    """The secret spans of `text`, merged, in order."""
    return _spans(text)[0]


def _spans(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """The secret spans of `text`, merged, in order; and the lines taken by a key block still open at its end."""
    found: list[tuple[int, int]] = []
    still_open = None
    if "PRIVATE KEY" in text or "MI" in text or "MHcCAQEE" in text:
        still_open = _key_spans(text, found)
    if "==" in text:
        found += [(key.end() - 88, key.end()) for key in PADDED_KEY.finditer(text)]
    line_end = -1
    for trigger in TRIGGER.finditer(text):
        if trigger.start() <= line_end:
            continue  # this line is done already
        line_start = text.rfind("\n", 0, trigger.start()) + 1
        line_end = text.find("\n", trigger.start())
        line_end = len(text) if line_end < 0 else line_end
        prefix = PREFIX.match(text, line_start, line_end)
        line_start = prefix.end() if prefix is not None else line_start
        line = text[line_start:line_end]
        for pattern, groups in zip(PATTERNS, _GROUPS, strict=True):
            for match in pattern.finditer(line):
                group = next(name for name in groups if match.start(name) >= 0)
                if match.end(group) > match.start(group):
                    found.append((line_start + match.start(group), line_start + match.end(group)))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged, still_open


def redact(text: str, plain: str | None = None) -> str:
    """`text` with every secret replaced by `[redacted]`; colour codes may be anywhere in it."""
    if "\x1b" not in text:
        return _redact(text, text, spans(text))
    plain = SGR.sub("", text) if plain is None else plain
    return _redact(text, plain, spans(plain))


def _redact(text: str, plain: str | None, found: list[tuple[int, int]]) -> str:
    """`text` with `found` (spans of `plain`, the text without colour codes) redacted."""
    if "\x1b" not in text:
        return _replace(text, found) if found else text
    plain = SGR.sub("", text) if plain is None else plain
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
