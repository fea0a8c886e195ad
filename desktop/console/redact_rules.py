"""The rules of redaction (desktop/console/redact.py applies them): each pattern names the secret part `s`;
everything else in a match (a name, a flag, a scheme) stays. Patterns run on a line's own words (after PREFIX), one
line at a time, and only on the lines a trigger found: desktop/console/triggers.py (Hyperscan, a trigger a pattern)
or, without it, TRIGGER below (RE2, one for all)."""

import re

import re2  # type: ignore[import-untyped]

# not a reference (`$X`, `\${X}`, `%X%`, `` `cmd` ``), template, placeholder, or a value shown hidden already
_VALUE = r"""(?!["']?(?:\$|\\\$|%\(|%\w+%|\{\{|<|`|…|\[redacted\]|\*{3}))(?![^\s"']*(?:\*{3}|•{3}))"""
_NAME_END = r"(?![A-Za-z0-9])"
SECRET_WORDS = (
    r"(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|auth[_-]?key|client[_-]?secret|_pass|-pass|session[_-]?key|account[_-]?key"
    r"|app(?:lication)?[_-]?key|_auth|client[_-]key[_-]data|secret[_-]key[_-]base|[_-]pat)"
)
_CREDENTIAL = r"(?=[A-Za-z0-9._~+/=\-]*(?:[0-9+/=]|[a-z][A-Z]))"  # a credential, not a word: a digit or a hump
_TOKEN_CHARS = r"[A-Za-z0-9_\-]"
# a value that is not one: a boolean or nothing, a call, a path
_NOT_A_VALUE = (
    r"(?!(?:null|none|nil|true|false|undefined)\b)(?![^\s\"',;&]*[(\[])(?!\.{1,2}/|~/)(?!process\.env\.)"
    r"(?-i:(?![A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9](?:[\s\"',;)]|$)))"
)  # a variable's name: "GITHUB_TOKEN"
# in code, a keyword argument passed on: `token=bot_token`
_NOT_A_NAME = r"(?-i:(?![a-z_.]*(?:token|secret|password|key)[a-z_.]*(?:[,;)&]|$)))"
# prose, not a pass phrase: `passwd: password updated successfully`, `password: must be at least 12 characters`
_PROSE = (
    r"(?![^#\n]*\b(?:must|be|is|are|was|were|has|have|not|no|the|at|to|for|of|with|updated|successfully"
    r"|required|missing|invalid|expired|changed|failed|set|found|see|please|enter|use)\b)"
)
# what a value that may hold spaces runs to: the end of the line, before a comment or a closing comma
_TO_THE_END = r"(?P<s>[^\s\"'#][^\s#]*(?:[ \t]+[^\s#]+)*)(?=\s*(?:#.*)?$)"  # words and spaces: linear
# quoted, and not the name of a variable that holds it (`"token": "GITHUB_TOKEN"`) or a label (`"Gemini (CLI)"`)
_QUOTED = (
    r"""(?-i:(?!["'][A-Z][A-Z0-9]*_[A-Z0-9_]+["'])(?!["'][a-z_.]*(?:token|secret|password|key)[a-z_.]*["']))"""
    r"""(?!["'][^"'\n]* \()"""
    r"""(?:"(?P<s>[^"\n]{3,})"|'(?P<s2>[^'\n]{3,})')"""
)
_FLAG_VALUE = r"""(?:"(?P<s>[^"\n]+)"|'(?P<s2>[^'\n]+)'|(?P<s3>[^\s"']+))"""
_BLOCK_HEADS = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS",
    "LS0tLS1CRUdJTiBQVUJMSUMgS0VZ",
    "LS0tLS1CRUdJTiBQR1AgUFVCTElD",
    "LS0tLS1CRUdJTiBYNTA5",
    "LS0tLS1CRUdJTiBTU0gyIFBVQkxJQy",
    "LS0tLS1CRUdJTiBORVcgQ0VSVElGSUNBVE",
)

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
    r"LS0tLS1CRUdJTi(?!"
    + "|".join(head[len("LS0tLS1CRUdJTi") :] for head in _BLOCK_HEADS)
    + r")[A-Za-z0-9+/]{8,}={0,2}",
]

PATTERNS: list[re.Pattern[str]] = [
    re.compile(p, flags)
    for p, flags in (
        ("(?P<s>" + "|".join(f"(?:{shape})" for shape in _SHAPES) + ")", 0),
        (r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{20,})", 0),
        # a credentials.csv row: the secret beside an access key ID, and the console password before it
        (r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16},(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", 0),
        (r"^[^,\s]+,(?P<s>[^,\n]+),(?:AKIA|ASIA)[0-9A-Z]{16},", 0),
        # GitHub Actions' mask command shows the value it masks
        (r"::add-mask::" + _VALUE + r"(?P<s>\S.*?)\s*$", 0),
        # credentials in headers, addresses and command lines
        (
            r"\b(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?!(?:AWS4-HMAC-SHA256|Digest)\s)(?:[A-Za-z][A-Za-z0-9_\-]*\s+)?"
            + _VALUE
            + _CREDENTIAL
            + r"(?P<s>[^\s\"',;]{8,})",
            0,
        ),
        (
            r"(?<![A-Za-z])(?:Bearer|Basic|bearer|basic|BEARER|BASIC)\s+"
            + _VALUE
            + _CREDENTIAL
            + r"(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)",
            0,
        ),
        (r"\bSignature=(?P<s>[0-9a-fA-F]{32,})", 0),  # AWS Signature Version 4
        (r"\b(?i:response)=\"(?P<s>[0-9a-fA-F]{16,})\"", 0),  # HTTP Digest
        # userinfo in an address: the password runs to the last `@` before the host, as curl reads it
        (r"://[^/\s:@\"'<>]*:" + _VALUE + r"(?P<s>[^/\s\"'<>]+)@(?=[^@/\s\"'<>]*(?:[/\s\"'<>?#]|$))", 0),
        (
            r"[?&](?i:key|sig|signature|token|access_token|refresh_token|id_token|api_key|api-key|apikey|auth|client_secret"
            r"|password|passwd|pwd|secret|code|appid|app_id|app_key|x-amz-signature|x-amz-credential|x-amz-security-token"
            r"|x-goog-signature|x-goog-credential)=" + _VALUE + r"(?P<s>[^&\s#\"'<>]+)",
            0,
        ),
        # flags: --password VALUE, --auth=VALUE, --registration-token VALUE, --with-api-key VALUE, --pass VALUE
        (
            r"(?i)(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|auth|account-key|access-key"
            r"|secret-key|private-key)(?![\w-])(?:=|\s+(?![a-z]+(?:\s|$)))"
            + _VALUE
            + _NOT_A_VALUE
            + r"(?!-)"
            + _FLAG_VALUE,
            0,
        ),
        (r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s*)[\"']?[^\s:\"']*:" + _VALUE + r"(?P<s>[^\s\"']+)", 0),
        (r"\b(?:mysql(?:dump|admin|sh)?|mariadb(?:-dump|-admin)?)\b[^\n]*?\s-p" + _VALUE + _FLAG_VALUE, 0),
        (
            r"\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm\s+registry)\s+login\b[^\n]*?\s-p(?:=|\s+)"
            + _VALUE
            + _FLAG_VALUE,
            0,
        ),
        (r"\bsshpass\s+-p\s*" + _VALUE + r"(?P<s>\S+)", 0),
        (r"\bredis-cli\b[^\n]*?\s-a\s+" + _VALUE + _FLAG_VALUE, 0),
        # NAME VALUE after a command that sets one: fish's `set -gx`, csh's `setenv`, `aws configure set`, rclone
        (
            r"(?i)(?:\bset\s+-[A-Za-z]+|\bsetenv|\bconfig(?:ure)?\s+set)\s+[^\s=]*?"
            + SECRET_WORDS
            + r"[\w\-]*\s+"
            + _VALUE
            + _NOT_A_VALUE
            + _FLAG_VALUE,
            0,
        ),
        (
            r"\brclone\s+config\s+(?:create|update)\b[^\n]*?\s(?:secret_access_key|key|pass|password|token|client_secret"
            r"|account_key|sas_url|bearer_token)\s+" + _VALUE + _NOT_A_VALUE + r"(?P<s>\S+)",
            0,
        ),
        (r"\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+" + _VALUE + r"(?P<s>\S+)", 0),  # user, password
        # a session cookie, and .NET's <add key="ApiKey" value="…"/>
        (
            r"(?i)\b(?:set-)?cookie:\s*(?:[^=\s;]+=[^;\s]*;\s*)*?[^=\s;]*(?:sess|sid|auth|token)[^=\s;]*="
            + _VALUE
            + r"(?P<s>[^;\s]{8,})",
            0,
        ),
        (r"(?i)\bkey=\"[\w.:\-]*" + SECRET_WORDS + r"[\w.:\-]*\"\s+value=\"" + _VALUE + r"(?P<s>[^\"\n]+)\"", 0),
        # a two-column table (`vault login`): `token    hvs.…`
        (r"^(?i:token|password|secret|client_token|secret_id)\s{2,}" + _VALUE + _CREDENTIAL + r"(?P<s>\S{8,})\s*$", 0),
        # a literal default of a secret's variable is the secret: ${TOKEN:-ghp_…}
        (r"(?i)\$\{[A-Za-z0-9_]*" + SECRET_WORDS + r"[A-Za-z0-9_]*:?[-=]" + _VALUE + r"(?P<s>[^}\s\"'`]+)\}", 0),
        # values that may hold spaces: YAML, quoted, XML, connection strings
        (
            r"(?i)^(?:[\"']|:)?[A-Za-z0-9_.\-]*"
            + SECRET_WORDS
            + _NAME_END
            + r"[\"']?\s*:\s+"
            + _VALUE
            + _NOT_A_VALUE
            + _PROSE
            + r"(?![\[{|>])(?![^#\n]*[(){}\[\]=])"
            + _TO_THE_END,
            0,
        ),  # not code: `token: str = Field(…)`
        (
            r"(?i)(?<![A-Za-z0-9_.\-/])(?<!\d:)[A-Za-z0-9_.\-]*"
            + SECRET_WORDS
            + _NAME_END
            + r"[\"']?\s*(?:[:=]|=>)\s*"
            + _VALUE
            + _QUOTED,
            0,
        ),
        (r"(?i)<([A-Za-z_:\-]*" + SECRET_WORDS + r")>" + _VALUE + r"(?P<s>[^<\n]+)</\1>", 0),
        (r"(?i)(?:^|;)\s*(?:password|pwd)\s*=\s*" + _VALUE + r"(?P<s>[^;\n\"']*[^;\s\"'])(?=\s*;)", 0),
        # NAME=value, name: value, "name": "value" for names that say what they hold
        (
            r"(?i)(?<![A-Za-z0-9_.\-/])(?<!\d:)(?<!\$\{)[A-Za-z0-9_.\-]*"
            + SECRET_WORDS
            + _NAME_END
            + r"[\"']?(?:\s*=>?|\s*:(?!\s*[A-Za-z]+(?:[\s\"',;&.)\]|]|$)))\s*[\"']?"
            + _VALUE
            + _NOT_A_VALUE
            + _NOT_A_NAME
            + r"(?P<s>[^\s\"',;&]{3,})",
            0,
        ),
        (r"(?i)aws[_.\-]?secret[_.\-]?access[_.\-]?key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})", 0),
        (r"(?i)secretaccesskey[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})", 0),
    )
]
GROUPS = [[name for name in pattern.groupindex if name.startswith("s")] for pattern in PATTERNS]

# where a log line's own words begin: after CI timestamps, `##[group]`, `::debug::`, a shell prompt, a list dash
PREFIX = re.compile(
    r"(?:\s*(?:\d{4}-\d\d-\d\d[T ][\d:.,]+Z?|##\[\w+\]|::(?:debug|notice|warning|error|group)"
    r"(?: [^:\n]*)?::|\[[\w .:/@\-]{1,40}\]|\d\d:\d\d:\d\d[\d.,]*|[|$+>#]|-(?=\s)))*\s*"
)


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
