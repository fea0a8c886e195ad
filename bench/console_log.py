"""A realistic build-and-test log for bench/console.py (issue 19): colour codes, progress bars redrawn with `\\r` and
erase-line, compiler, test-runner, git and service output under CI timestamps; one line in ten looks like a credential
but is not (references, flags, messages, hashes, masked values, docs), one in a thousand holds a real credential of
one of many kinds (a private key block spans lines). `make_log` writes it and says which raw lines are which."""

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
NAMES = ["API", "GITHUB", "NPM", "DEPLOY", "SENTRY", "SLACK", "DB", "REDIS", "AWS", "STRIPE", "CI", "REGISTRY"]
PACKAGES = ["serde", "tokio", "react-dom", "lodash", "numpy", "requests", "esbuild", "typescript", "hyper", "rand"]
STAMP = "2026-05-09T02:{m:02d}:{s:02d}.{f:07d}Z "


@dataclass
class Planted:
    secrets: dict[int, list[str]] = field(default_factory=dict)  # raw line number (1-based): its secret parts
    benign: list[int] = field(default_factory=list)  # raw lines that look like a credential and are not


def _pick(rng: random.Random, chars: str, n: int) -> str:
    return "".join(rng.choices(chars, k=n))


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _build(rng: random.Random, n: int) -> str:
    pkg = PACKAGES[n % len(PACKAGES)]
    return rng.choice(
        [
            f"   \x1b[1m\x1b[32mCompiling\x1b[0m {pkg} v1.{n % 40}.{n % 7}",
            f"[{n % 400}/400] Building CXX object src/CMakeFiles/core.dir/module_{n % 997}.cpp.o",
            f"asset main.{_hex(rng, 8)}.js {n % 900} KiB \x1b[1m\x1b[32m[emitted]\x1b[39m\x1b[22m [minimized] (name: main)",
            f"\x1b[33mwarning\x1b[0m: unused variable: `value_{n % 50}`\n"
            f"  \x1b[34m-->\x1b[0m src/lib.rs:{n % 900}:{n % 80}",
            f"npm WARN deprecated {pkg}@{n % 9}.{n % 5}.0: This version is no longer supported.",
            f"Step {n % 12 + 1}/12 : RUN pip install --no-cache-dir -r requirements.txt\n ---> Running in {_hex(rng, 12)}",
            f"  \x1b[2m{pkg}\x1b[22m \x1b[36m{n % 300}.{n % 10} kB\x1b[39m │ gzip: {n % 90}.{n % 10} kB",
        ]
    )


def _test(rng: random.Random, n: int) -> str:
    return rng.choice(
        [
            f"tests/test_api.py::test_case_{n} \x1b[32mPASSED\x1b[0m \x1b[32m[{n % 100:3d}%]\x1b[0m",
            f"    \x1b[32m✓\x1b[39m \x1b[2mrenders item {n} with props\x1b[22m (\x1b[2m{n % 40} ms\x1b[22m)",
            f" \x1b[32m✓\x1b[39m src/module_{n % 97}.test.ts \x1b[2m({n % 30} tests)\x1b[22m \x1b[33m{n % 900}ms\x1b[39m",
            f"tests/unit/test_models_{n % 40}.py \x1b[32m........\x1b[0m\x1b[32m{' ' * 32}[ {n % 100}%]\x1b[0m",
            f"  ok {n % 500} - parses input #{n}",
        ]
    )


def _progress(rng: random.Random, n: int) -> str:
    total = rng.randrange(5, 200)
    kind = n % 3
    if kind == 0:
        return "".join(
            f"\r   \x1b[38;5;197m{'━' * (p // 3)}\x1b[38;5;237m{'━' * (33 - p // 3)}\x1b[0m "
            f"{total * p // 100}/{total} MB \x1b[31m{rng.random() * 40:.1f} MB/s\x1b[0m"
            for p in range(0, 101, 20)
        )
    if kind == 1:
        layer = _hex(rng, 12)
        return "".join(
            f"\r{layer}: Downloading [{'=' * (p // 5)}>{' ' * (20 - p // 5)}]  {total * p // 100}MB/{total}MB"
            for p in range(0, 101, 25)
        )
    spinner = "⠋⠙⠹⠸⠼⠴"
    return "".join(f"\x1b[2K\x1b[1G{spinner[i]} fetching {PACKAGES[(n + i) % len(PACKAGES)]}" for i in range(6))


def _ids(rng: random.Random, n: int) -> str:
    sha = _hex(rng, 40)
    return rng.choice(
        [
            f"commit {sha}\nMerge: {sha[:7]} {_hex(rng, 7)}",
            f"Updating {sha[:7]}..{_hex(rng, 7)}",
            f"digest: sha256:{_hex(rng, 64)} size: {n % 4000}",
            f"{sha[:12]}: Pull complete",
            f"request id {sha[:8]}-{sha[8:12]}-{sha[12:16]}-{sha[16:20]}-{sha[20:32]} took {n % 900}ms",
            f" {n % 9} files changed, {n % 300} insertions(+), {n % 40} deletions(-)",
        ]
    )


def _service(rng: random.Random, n: int) -> str:
    return rng.choice(
        [
            f"\x1b[2m{n % 24:02d}:{n % 60:02d}:{n % 60:02d}\x1b[0m \x1b[32mINFO\x1b[0m [http] GET /api/v1/items/{n} 200 "
            f"{n % 90}ms",
            f'{{"level":"info","msg":"request done","path":"/api/items/{n}","status":200,"duration_ms":{n % 90}}}',
            f"    at Object.<anonymous> (/app/src/server_{n % 20}.js:{n % 400}:{n % 60})",
            f'  File "/app/service/handlers.py", line {n % 700}, in handle_{n % 30}',
            f"\x1b[36mDEBUG\x1b[0m pool size={n % 32} idle={n % 7} waiting=0",
            f"> {PACKAGES[n % len(PACKAGES)]}@{n % 9}.0.0 build /app/packages/web",
        ]
    )


def _benign(rng: random.Random, n: int) -> str:
    name = NAMES[n % len(NAMES)]
    low = name.lower()
    return rng.choice(
        [
            f"export {name}_TOKEN=${name}_TOKEN",
            f"echo ${name}_PAT | docker login ghcr.io -u ci-{low} --password-stdin",
            "Warning: Using --password via the CLI is insecure. Use --password-stdin.",
            f"SyntaxError: unexpected token: EOF (bundle.{_hex(rng, 8)}.js:{n % 900}:{n % 80})",
            "Parse error: unexpected token: '}'",
            f"      password: ${{{{ secrets.{name}_PASSWORD }}}}",
            f"      token: ${{{{ secrets.{name}_TOKEN }}}}",
            f'curl -sS -H "Authorization: Bearer ${name}_TOKEN" https://api.example.com/v1/items/{n}',
            f"> Authorization: Bearer ${{{name}_TOKEN}}",
            f'      "integrity": "sha512-{_pick(rng, B64, 86)}==",',
            f"resolved {PACKAGES[n % len(PACKAGES)]}@{n % 9}.1.0 integrity sha512-{_pick(rng, B64, 86)}==",
            "# `secret_key_base` is used as the input secret to the application's key generator",
            f"{name}_TOKEN=***",
            "passwd: password updated successfully",
            f"kubectl create secret generic {low} --from-file=password=./secrets/{low}.txt",
            f"fetched arn:aws:secretsmanager:eu-west-1:{n % 10**12:012d}:secret:prod/{low}-{_pick(rng, ALNUM, 6)}",
            f"password_min_length: {n % 20 + 8}",
            f"token_ttl: {n % 9000}s",
            "Enter passphrase for key '/home/ci/.ssh/id_ed25519':",
            f"set -gx {name}_TOKEN ${name}_TOKEN",
            f"TOKEN=`cat /run/secrets/{low}_token`",
            f'    api_key = os.environ["{name}_API_KEY"]',
            f'    token: str = Field(..., description="{name} API token")',
            "GET https://login.example.com/authorize?response_type=code&client_id=web&scope=openid",
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_pick(rng, B64, 43)} ci@build-{n % 9}",
            "Secret scanning found 0 issues",
            "error: the --token flag requires a value",
            "mysql -u root -p -h 127.0.0.1",
            f"The token bucket refills at {n % 50} per second",
            f"::add-mask::${name}_TOKEN",
            f"{low}_password: ${{{name}_PASSWORD:?{name}_PASSWORD must be set}}",
            f"Invalid token: expired ({n % 60}s ago)",
            "Login Succeeded",
            f"npx deploy --api-key ${name}_API_KEY --env prod",
            f'Error: secret "{low}" not found',
        ]
    )


def _secret(rng: random.Random, n: int) -> tuple[str, list[str]]:
    """A line with a real credential and the parts that must not be shown."""
    kind = (n // 1000) % 17
    value = {
        0: "ghp_" + _pick(rng, ALNUM, 36),
        1: "glpat-" + _pick(rng, ALNUM, 20),
        2: "AKIA" + _pick(rng, string.ascii_uppercase + "234567", 16),
        3: f"xoxb-{rng.randrange(10**10)}-{rng.randrange(10**10)}-{_pick(rng, ALNUM, 24)}",
        4: "sk_live_" + _pick(rng, ALNUM, 24),
        5: "sk-proj-" + _pick(rng, ALNUM, 48),
        6: "AIza" + _pick(rng, ALNUM, 35),
        7: "npm_" + _pick(rng, ALNUM, 36),
        8: "sk-ant-api03-" + _pick(rng, ALNUM + "_-", 90) + "AA",
    }.get(kind)
    if value is not None:
        shown = f"\x1b[33m{value}\x1b[0m" if n % 3 == 0 else value
        return rng.choice(
            [
                f"export SERVICE_KEY={shown}",
                f"using credential {shown} for upload",
                f'{{"level":"debug","cred":"{shown}"}}',
            ]
        ), [value]
    word = _pick(rng, ALNUM, 8) + str(rng.randrange(10, 99)) + _pick(rng, ALNUM, 8)
    if kind == 9:
        return f"git clone https://deploy:{word}@git.example.com/team/app.git", [word]
    if kind == 10:
        return f'curl -sS -H "Authorization: Bearer {word}" https://api.example.com/v1/me', [word]
    if kind == 11:
        return f"DATABASE_URL=postgres://app:{word}@db.internal:5432/prod", [word]
    if kind == 12:
        return f"  password: {word}", [word]
    if kind == 13:
        return f"docker login -u ci -p {word} registry.example.com", [word]
    if kind == 14:
        jwt = f"eyJhbGciOiJIUzI1NiJ9.eyJ{_pick(rng, ALNUM, 30)}.{_pick(rng, ALNUM + '_-', 43)}"
        return f"set-cookie: session={jwt}; Path=/; HttpOnly", [jwt]
    if kind == 15:
        key = _pick(rng, B64, 86) + "=="
        return f"DefaultEndpointsProtocol=https;AccountName=logs;AccountKey={key};EndpointSuffix=core.net", [key]
    body = [_pick(rng, B64, 64) for _ in range(6)]
    block = ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]
    return "\n".join(block), block


KINDS: list[tuple[float, Callable[[random.Random, int], str]]] = [
    (0.27, _build),
    (0.22, _test),
    (0.07, _progress),
    (0.14, _ids),
    (0.30, _service),
]


def make_log(path: Path, megabytes: int, seed: int = 19) -> Planted:
    """Writes about `megabytes` MB of log to `path`."""
    rng = random.Random(seed)
    planted = Planted()
    weights = [weight for weight, _ in KINDS]
    makers = [make for _, make in KINDS]
    with open(path, "w", encoding="utf-8", newline="") as f:
        written, n, raw = 0, 0, 0  # bytes, lines made, raw lines written
        while written < megabytes * 1_000_000:
            n += 1
            secrets: list[str] = []
            if n % 1000 == 500:
                text, secrets = _secret(rng, n)
            elif n % 10 == 3:
                text = _benign(rng, n)
                planted.benign.append(raw + 1)
            elif n % 2500 == 1:
                text = "waiting for the database to accept connections…\n" * rng.randrange(2, 6) + "database ready"
            elif n % 4000 == 7:
                text = "!function(e){" + ";".join(f"var a{i}=e[{i}]" for i in range(900)) + "}(window);"  # minified
            else:
                text = rng.choices(makers, weights)[0](rng, n)
            lines = text.split("\n")
            if n % 5 < 2 and not secrets:  # GitHub Actions' timestamps before some lines
                lines = [STAMP.format(m=n // 60000 % 60, s=n // 1000 % 60, f=n % 10**7) + line for line in lines]
            for offset, line in enumerate(lines):
                parts = [secret for secret in secrets if secret in line]
                if parts:
                    planted.secrets[raw + offset + 1] = parts
            raw += len(lines)
            out = "\n".join(lines) + "\n"
            f.write(out)
            written += len(out.encode())
    return planted
