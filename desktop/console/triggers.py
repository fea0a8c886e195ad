"""Which lines of a block may hold a secret, and for which of redact_rules.PATTERNS: one Hyperscan (Vectorscan)
database of every pattern's trigger, run once over the block's UTF-8 bytes, so a line no trigger matches costs no
Python at all.

A trigger is a necessary condition of its pattern (broader, never narrower): the pattern's literal words and, where
credential-looking lines are common, what its value must start with (`TOKEN=$TOKEN`, `--password-stdin`,
`Bearer $TOKEN`, `${{ secrets.X }}` match no trigger; `token: EOF` costs the one YAML pattern, since a trigger that
knew where a line's own words begin would scan three times slower). Triggers see bytes, where Python's patterns see
characters, so each class is widened to hold what a character class of Python's could match: `\\s` holds every byte
>= 0x80 (any other character's UTF-8), a case-blind word also matches the four letters Python folds onto ASCII
(İ ı ſ K), and an excluded class (`[^\\s"']`) never excludes those bytes. tests/integration/test_console_fast.py checks
that no pattern matches a line its trigger missed, on the corpus and on variants of it."""

from collections.abc import Iterator

from desktop.console.redact_rules import PATTERNS, SECRET_WORDS
from desktop.console.scan import in_chars, scanner, utf8

SPACE = r"\t-\r\x1c-\x20"  # ASCII bytes Python's \s matches, for an excluded class (which then holds no newline)
IN_LINE = r"\t\x0b-\r\x1c-\x20"  # the same but the newline, for a class of what may come (a line holds no newline)
WS = rf"[{IN_LINE}\x80-\xff]"  # a byte of a Python `\s` character
_FOLDS = {"i": r"(?:[iI]|\xc4[\xb0\xb1])", "k": r"(?:[kK]|\xe2\x84\xaa)", "s": r"(?:[sS]|\xc5\xbf)"}


def ci(words: str) -> str:
    """Words (an alternation without classes of letters) matched as Python's `(?i)` does."""
    return "".join(_FOLDS.get(c.lower(), f"[{c.lower()}{c.upper()}]") if c.isalpha() else c for c in words)


SW = ci(SECRET_WORDS)
NAME = ci("authorization")
# a value that is not a reference: it does not start with `$`, `<` or a backquote
VALUE = rf"(?:[\"']|[^{SPACE}\"'$<`])"


# where a name may begin: not after a name's character or `/`, `1:`, `${`
NAME_BEGINS = r"(?:^|[^A-Za-z0-9_.\-/:{]|[^0-9]:|^:|[^$]\{|^\{)"


def _name_value() -> str:
    """NAME=value and `name: value` (redact_rules: the last general pattern): a value of three characters or more,
    not a reference, not a call (`os.environ["X"]`), not a word after a colon (`token: EOF`)."""
    stop = rf"{SPACE}\"',;&(\["  # what ends the value, and a call's brackets

    def value(letter: str) -> str:  # not `$X`, `./path`, `***`; three characters or more (most); no brackets
        first = rf"[^{stop}$<`.~*{letter}][^{stop}]{{2}}|\.[^{stop}/]|~[^{stop}/]|\*\*?[^{stop}*]"
        return rf"(?:{first})[^{stop}\x80-\xff]*(?:[{IN_LINE}\"',;&\x80-\xff]|$)"

    return (
        rf"{NAME_BEGINS}[A-Za-z0-9_.\-\x80-\xff]*{SW}[\"']?(?:{WS}*=>?{WS}*[\"']?{value('')}|{WS}*:{WS}*"
        rf"(?:[\"']{value('')}|{value('A-Za-z')}|[A-Za-z]+[^A-Za-z{SPACE}\"',;&.)\]|]))"
    )


# one entry a pattern of redact_rules.PATTERNS, in its order: the triggers of that pattern
BY_PATTERN: list[list[str]] = [
    # tokens with a shape
    [
        r"gh[pousr]_[A-Za-z0-9]{36}",
        r"github_pat_[A-Za-z0-9_]{22}",
        r"gl(?:pat|dt|rt|ptt|cbt|imt|soat|ffct|oas)-[A-Za-z0-9_\-]{20}",
        r"xox[abposre]-[A-Za-z0-9\-]{10}",
        r"xapp-",
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{16}",
        r"whsec_[A-Za-z0-9]{24}",
        r"sk-[A-Za-z0-9_\-]{20}",
        r"AIza[0-9A-Za-z_\-]{35}",
        r"GOCSPX-[A-Za-z0-9_\-]{28}",
        r"ya29\.[0-9A-Za-z_\-]{20}",
        r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
        r"npm_[A-Za-z0-9]{36}",
        r"pypi-[A-Za-z0-9_\-]{50}",
        r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10}",
        r"hv[sbr]\.[A-Za-z0-9_\-]{20}",
        r"PMAK-[0-9a-fA-F]{24}-",
        r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20}",
        r"SG\.[A-Za-z0-9_\-]{16,32}\.",
        r"NRAK-[A-Z0-9]{27}",
        r"Q~[A-Za-z0-9_~.\-]{31}",
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{8}",
    ],
    [r"hooks\.slack\.com/"],
    [r"(?:AKIA|ASIA)[0-9A-Z]{16},[A-Za-z0-9/+]{40}"],
    [r",(?:AKIA|ASIA)[0-9A-Z]{16},"],
    [rf"::add-mask::[^{SPACE}$<`]"],
    [rf"{NAME}[\"']?{WS}*[:=]{WS}*[\"']?(?:[A-Za-z][A-Za-z0-9_\-]*{WS}+)?[^{SPACE}\"',;$<`][^{SPACE}\"',;]{{7}}"],
    [rf"(?:Bearer|Basic|bearer|basic|BEARER|BASIC){WS}+[A-Za-z0-9._~+/\-]{{8}}"],
    [r"Signature=[0-9a-fA-F]{32}"],
    [ci("response") + r"=\"[0-9a-fA-F]{16}"],
    [rf"://[^/{SPACE}:@\"'<>]*:[^/{SPACE}\"'<>$`][^/{SPACE}\"'<>]*@"],
    [
        r"[?&]"
        + ci(
            "(?:key|sig|signature|token|access_token|refresh_token|id_token|api_key|api-key|apikey|auth"
            "|client_secret|password|passwd|pwd|secret|code|appid|app_id|app_key|x-amz-signature"
            "|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)"
        )
        + rf"=[^&{SPACE}#\"'<>$`]"
    ],
    # a flag: not `--password-stdin`, not `--token flag …`, not `--api-key $KEY`
    [
        "-"
        + ci("(?:password|passwd|pass|token|secret|api-?key|auth|account-key|access-key|secret-key|private-key)")
        + rf"(?:=(?:[\"']|[^{SPACE}\"'$<`\-])"
        rf"|{WS}+(?:[\"']|[^A-Za-z{SPACE}$<`\-]|[A-Za-z]+[^A-Za-z{SPACE}]))"
    ],
    [rf"curl[^\n]*(?:-u|--user)(?:=|{WS}*)[\"']?[^{SPACE}:\"']*:[^{SPACE}\"'$<`]"],
    [rf"(?:mysql|mariadb)[^\n]*{WS}-p{VALUE}"],
    [rf"login[^\n]*{WS}-p(?:=|{WS}+){VALUE}"],
    [rf"sshpass{WS}+-p"],
    [r"redis-cli"],
    [
        rf"(?:{ci('set')}{WS}+-[A-Za-z\x80-\xff]+|{ci('setenv')}|{ci('config(?:ure)?')}{WS}+{ci('set')}){WS}+"
        rf"[^{SPACE}=]*{SW}[A-Za-z0-9_\-\x80-\xff]*{WS}+{VALUE}"
    ],
    [rf"rclone{WS}+config"],
    [rf"htpasswd{WS}+-"],
    [ci("cookie:")],
    [ci('key="')],
    [ci("(?:token|password|secret|client_token|secret_id)") + rf"{WS}{{2,}}[^{SPACE}$<`][^{SPACE}]{{7}}"],
    [rf"\$\{{[A-Za-z0-9_\x80-\xff]*{SW}[A-Za-z0-9_\x80-\xff]*:?[\-=][^}}{SPACE}\"'`$<]"],
    # YAML and the like: a value that is not a reference or code (that the name begins the line's own words is left
    # to the pattern: a trigger that looked for it would scan three times slower)
    [
        rf"{SW}[\"']?{WS}*:{WS}+"
        rf"[^{SPACE}\"'#$<`\[{{|>(){{}}\]=][^(){{}}\[\]=#\n]*(?:#|$)"
    ],
    [rf"{SW}[\"']?{WS}*(?:[:=]|=>){WS}*(?:\"[^\"\n$<`][^\"\n]{{2}}[^\"\n]*\"|'[^'\n$<`][^'\n]{{2}}[^'\n]*')"],
    [rf"{SW}>(?:[\"']|[^<\n$`\"'])"],
    [ci("(?:password|pwd)") + rf"{WS}*={WS}*[^;\n\"'$<`][^;\n\"']*;"],
    [_name_value()],
    [ci(r"aws[_.\-]?secret[_.\-]?access[_.\-]?key")],
    [ci("secretaccesskey")],
]


assert len(BY_PATTERN) == len(PATTERNS), "a trigger list for each pattern"
# two more ids: redact.py's key blocks (KEY_START) and unnamed Azure keys (PADDED_KEY)
KEY_ID, PADDED_ID = len(PATTERNS), len(PATTERNS) + 1
KEY_STARTS = [
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY",
    r"MII[A-Za-z0-9+/]{3}(?:IBA|BOBgkqhkiG9w0BBQ0w)",
    r"MIG[A-Za-z0-9+/]AgEA",
    r"MHcCAQEE",
]
SCANNER = scanner(
    [(index, trigger) for index, triggers in enumerate(BY_PATTERN) for trigger in triggers]
    + [(KEY_ID, trigger) for trigger in KEY_STARTS]
    + [(PADDED_ID, r"[A-Za-z0-9+/]{86}==")]
)


def candidates(text: str) -> Iterator[tuple[int, int, set[int]]]:
    """(start, end, ids) of each line of `text` a trigger matched: where the line starts and ends in `text`, and the
    indices of the patterns whose triggers matched it (KEY_ID: a key block may start there, PADDED_ID: a padded
    key may end there). SCANNER() must not be None."""
    made = SCANNER()
    assert made is not None
    data = utf8(text)
    return in_chars(text, data, made.lines(data))
