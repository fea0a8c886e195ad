"""The redaction corpus: secrets of every category the console redacts, in several shapes, inside realistic log
lines, with and without colour codes (POSITIVES: line, secret); and lines that look secret-ish but are not
(NEGATIVES: they must come out unchanged)."""

import itertools

B64 = "Zm9vYmFyQmF6UXV4MTIz"
TOKENS: dict[str, list[str]] = {
    "github": ["ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8", "gho_" + "x9Y8z7W6v5" * 3 + "u4T3s2", "ghs_" + "Q" * 18 + "9" * 18,
               "ghr_" + "mN3" * 12, "github_pat_11ABCDEFG0" + "abcDEF123_" * 6 + "xyz"],
    "gitlab": ["glpat-" + "aB3dE6gH9jK2mN5pQ8sT", "glpat-xR2_yT5-uI8oP1aS4dF7", "gldt-" + "k8L9m0N1b2V3c4X5z6A7"],
    "slack": ["xoxb-2410-" + "1234567890-" + "aBcDeFgHiJkLmNoPqRsTuVwX", "xoxp-9876543210-9876543210-abcdefABCDEF",
              "xapp-1-A0123BCDEF-1234567890123-" + "f" * 32],
    "stripe": ["sk_live_" + "51HqLyjWDarjtT1zdp7dc", "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
               "sk_test_" + "26PHem9AhJZvU623DfE1x4sd", "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSWb"],
    "openai": ["sk-proj-" + "Ab1Cd2Ef3Gh4" * 6, "sk-svcacct-" + "Zz9Yy8Xx7Ww6" * 5, "sk-" + "T3BlbkFJ" * 6],
    "anthropic": ["sk-ant-api03-" + "kR4_nW8-" * 11 + "AAAA", "sk-ant-admin01-" + "Q1w2E3r4T5y6" * 7],
    "google": ["AIzaSyD" + "-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"[:32], "GOCSPX-" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N",
               "ya29.a0AfB_byC" + "x1Y2z3" * 8],
    "aws": ["AKIA" + "Z7Q2W3E4R5T6Y7U8", "ASIA" + "JEXAMPLEXEG2JICEA"[:16]],
    "npm": ["npm_" + "a1B2c3D4e5" * 3 + "F6g7H8"],
    "pypi": ["pypi-AgEIcHlwaS5vcmcCJDU0ZjE2" + "MzQ1LTg5YWItNGNkZS1iZGY5" * 3],
    "jwt": ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "eyJraWQiOiJrMSJ9.eyJpc3MiOiJodHRwczovL2F1dGgifQ.c2lnbmF0dXJlX2J5dGVzXzEyMzQ1Ng"],
}
TOKEN_CONTEXTS = [
    "{s}",
    "2026-11-29T10:00:01Z INFO uploading with {s}",
    "[deploy] token loaded: {s} (expires in 1h)",
    "value='{s}'",
    '{{"level":"debug","cred":"{s}"}}',
    "\x1b[33m{s}\x1b[0m",
    "\x1b[1mcred\x1b[0m \x1b[32m{head}\x1b[1m{tail}\x1b[0m done",  # a colour code inside the secret
    "+ curl -s https://api.example.com/v1/x -d k={s}",
]
# whole lines whose secret part is given separately
STRUCTURAL: list[tuple[str, str]] = [
    ("Authorization: Bearer abcDEF123ghiJKL456", "abcDEF123ghiJKL456"),
    ("authorization: token 0a1b2c3d4e5f6a7b8c9d", "0a1b2c3d4e5f6a7b8c9d"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("> Authorization: Digest username8Q2 response=9f8e7d6c", "username8Q2"),
    ("-H 'Authorization: ApiKey Kx9_Lm2-Np4QrS'", "Kx9_Lm2-Np4QrS"),
    ("curl -H \"Bearer: ignored\" -H \"Authorization: Bearer sEcReT9x8y7z\"", "sEcReT9x8y7z"),
    ("request header bearer Zq8RtY6uI4oP2aS0", "Zq8RtY6uI4oP2aS0"),
    ("cloning https://deploy:Xy9s3cr3tPw@git.example.com/team/repo.git", "Xy9s3cr3tPw"),
    ("DATABASE_URL=postgres://app:hunter2x@db.internal:5432/prod", "hunter2x"),
    ("connecting to redis://:s3cretRedis@cache:6379/0", "s3cretRedis"),
    ("amqp://guest:Gu3stPass!@rabbit:5672", "Gu3stPass!"),
    ("export API_TOKEN=f00ba5c0ffee1234", "f00ba5c0ffee1234"),
    ("DB_PASSWORD=correct-horse-battery", "correct-horse-battery"),
    ("password: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ('{"client_secret": "cs_9f8e7d6c5b4a"}', "cs_9f8e7d6c5b4a"),
    ("SECRET_KEY = 'django-insecure-x8y7z6'", "django-insecure-x8y7z6"),
    ("apiKey: k-0123456789abcdef", "k-0123456789abcdef"),
    ("  smtp_pass=mailPass2024", "mailPass2024"),
    ("GITHUB_TOKEN: plainvalue123", "plainvalue123"),
    ("//registry.npmjs.org/:_authToken=npmSecretValue42", "npmSecretValue42"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"),
    ('"SecretAccessKey": "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"', "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"),
    ("curl -u admin:Adm1nPass https://jenkins.local/api", "Adm1nPass"),
    ("curl --user ci-bot:b0tPassw0rd -X POST https://x", "b0tPassw0rd"),
    ("mysql -u root -pR00tPass! mydb", "R00tPass!"),
    ("mysqldump --host db -u backup -pBackupPw9 --all-databases", "BackupPw9"),
    ("docker login -u bot -p dckr_pat_abc123XYZ registry.example.com", "dckr_pat_abc123XYZ"),
    ("docker login --username bot -p=Dock3rPw ghcr.io", "Dock3rPw"),
    ("sshpass -p 'Ssh!Pass7' ssh deploy@10.0.0.5", "'Ssh!Pass7'"),
    ("sshpass -pSshPass8 scp a b", "SshPass8"),
    ("redis-cli -h cache -a RedisPw99 ping", "RedisPw99"),
    ("vault login --token=hvs.CAESIJ1x2y3z", "hvs.CAESIJ1x2y3z"),
    ("./deploy.sh --password hunter22 --env prod", "hunter22"),
    ("terraform apply --secret=tf-Secret-77", "tf-Secret-77"),
    ("gh auth --token gho_short_but_secret", "gho_short_but_secret"),
    ("psql --password \"Pg Pass 1\" -d app", "\"Pg Pass 1\""),
    ("POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
     "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("GET https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AbCdEf123456", "AbCdEf123456"),
    ("https://bucket.s3.amazonaws.com/f.zip?X-Amz-Signature=9e8d7c6b5a4f&X-Amz-Expires=300", "9e8d7c6b5a4f"),
    ("https://store.blob.core.windows.net/c/b?sv=2022&sig=aBcD%2BeFgH%3D&se=2026", "aBcD%2BeFgH%3D"),
    ("wss://stream.example.com/feed?token=live_tok_3x4y5z", "live_tok_3x4y5z"),
    ("https://api.example.com/v2/items?page=2&access_token=at_998877", "at_998877"),
]
STRUCTURAL_CONTEXTS = ["{s}", "+ {s}", "[ci] $ {s}", "\x1b[2m{s}\x1b[0m", "12:00:01 | {s}"]
KEY_BLOCKS = [f"-----BEGIN {kind}PRIVATE KEY-----\n{B64}{B64}\n{B64}==\n-----END {kind}PRIVATE KEY-----"
              for kind in ("", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "DSA ")]


def positives() -> list[tuple[str, str]]:
    cases = []
    for secret in itertools.chain.from_iterable(TOKENS.values()):
        for context in TOKEN_CONTEXTS:
            cases.append((context.format(s=secret, head=secret[:9], tail=secret[9:]), secret))
    for line, secret in STRUCTURAL:
        cases += [(context.format(s=line), secret) for context in STRUCTURAL_CONTEXTS]
    cases += [(f"writing key:\n{block}\ndone", f"{B64}{B64}") for block in KEY_BLOCKS]
    return cases


BENIGN: list[str] = [
    # references to secrets, which stay
    "export API_TOKEN=$API_TOKEN", "curl -H \"Authorization: Bearer $TOKEN\" https://api", "TOKEN=${API_TOKEN}",
    "password: ${DB_PASSWORD}", "API_KEY=$(cat ~/.token)", "token: ${{ secrets.GITHUB_TOKEN }}",
    "docker login -u bot -p $REGISTRY_PASSWORD ghcr.io", "mysql -u root -p$MYSQL_ROOT_PASSWORD", "--token=$GH_TOKEN",
    "sshpass -p \"$SSH_PASS\" ssh host", "redis-cli -a $REDIS_PASSWORD", "secret: %(secret)s",
    "password=<your password here>", "DB_PASSWORD=********", "api_key: [redacted]", "curl -u \"$USER:$PASS\" https://x",
    # hashes, ids, digests
    "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904", "Merge 1a2b3c4 into 9f8e7d6", "HEAD is now at e83c516 fix",
    "request id 123e4567-e89b-12d3-a456-426614174000", "trace=f47ac10b-58cc-4372-a567-0e02b2c3d479",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "resolved sha1-Lx1/oVHn6qSiHU2vsZ0a8pX3Jfs=",
    "pulled image sha256:9b2a28eb47540823042a2ba401386845089bb7b62a9637d55816132c4c3c36eb",
    "node@sha256:2e1ee7a1d1e0fd7c8a3fbe6f5d0e7b6a8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f",
    "ETag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"", "md5 d41d8cd98f00b204e9800998ecf8427e  empty.txt",
    # words and log lines that only sound like secrets
    "Basic authentication is enabled for /admin", "Bearer tokens expire after one hour",
    "password reset email sent to sarah", "Forgot password? Reset it at /reset", "password: null", "token: None",
    "input_tokens=12 output_tokens=7 total_tokens=19", "max_tokens: 4096", "token_type: bearer",
    "tokenizer=bert-base-uncased", "secret_name: my-app-secret", "Using key file ~/.ssh/id_rsa",
    "The secret to good tests is speed.", "sk-learn is not the package name, scikit-learn is",
    "risk-assessment-2024-quarterly-report-final-v2", "task-management-system-overview-document",
    "npm_config_cache=/home/ci/.npm", "PWD=/home/ci/project", "credentials: include",
    "authorization: required", "WWW-Authenticate: Bearer realm=\"api\"", "key: value", "primary_key: id",
    "const token = getToken(request);", "password = hash(password, salt)", "secret: true", "api_key: false",
    "Passwords must be at least 12 characters", "bypass: true", "compass: north",
    # addresses without credentials
    "https://github.com/team/repo/pull/123", "postgres://localhost:5432/app", "http://user@host.example.com/path",
    "git@github.com:team/repo.git", "https://example.com/search?q=token&page=2", "http://localhost:8080/@scope/pkg",
    "https://example.com/?keyword=secret&signature_version=4", "ws://127.0.0.1:7431/api/events",
    "ssh://deploy@10.0.0.5:22/srv", "file:///home/ci/.token",
    # command lines without secrets
    "curl -u admin https://x", "mysql -u root -p mydb", "docker login -u bot ghcr.io", "redis-cli ping",
    "git commit -m 'rotate the api key'", "pytest -k token",
    "./deploy.sh --env prod --dry-run", "gh auth status", "ls -la ~/.aws",
    # test and build output
    "\x1b[32m✓\x1b[0m src/auth/token.test.ts (12 tests) 43ms", "PASSED tests/test_secrets.py::test_redacts",
    "Compiling ring v0.17.8", "warning: unused variable `secret`", "  × fails on purpose 5ms",
    "Downloading layer 4f4fb700ef54 100% [====================]", "[00001234] build compiling crate_12 v0.3.0",
]
BENIGN_CONTEXTS = ["{s}", "2026-11-29T10:00:01Z INFO {s}", "\x1b[2m{s}\x1b[0m", "  | {s}", "[build] {s}",
                   "\x1b[36m[web]\x1b[0m {s}"]
NEGATIVES = [context.format(s=line) for line in BENIGN for context in BENIGN_CONTEXTS]
