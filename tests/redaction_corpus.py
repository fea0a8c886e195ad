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
    ('> Authorization: Digest username="ci", realm="api", uri="/", response="9f8e7d6c5b4a39281706\"',
     "9f8e7d6c5b4a39281706"),
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


# Issue 19: (category, line, secret, words that must stay). Each is also tried coloured and in CI-log forms (`forms`).
CASES: list[tuple[str, str, str, tuple[str, ...]]] = [
    # name and value separated by spaces
    ("spaces", "set -gx ANTHROPIC_API_KEY Qx7Lm2Zp9Wt4", "Qx7Lm2Zp9Wt4", ("set -gx ANTHROPIC_API_KEY",)),
    ("spaces", "set -x NPM_TOKEN Np4Lq8Zx2Wm6Tr", "Np4Lq8Zx2Wm6Tr", ("set -x NPM_TOKEN",)),
    ("spaces", "setenv GITLAB_TOKEN Gl7Qm2Xz9Lp4", "Gl7Qm2Xz9Lp4", ("setenv GITLAB_TOKEN",)),
    ("spaces", "setenv SMTP_PASSWORD \"m4il-Pw-2026\"", "m4il-Pw-2026", ("setenv SMTP_PASSWORD",)),
    ("spaces", "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", ("aws configure set aws_secret_access_key",)),
    ("spaces", "aws configure set aws_secret_access_key Yb3Nc5Md7Pf9Rh1Tj3Vl5Xn7Zp9Br1Dt3Fv5Hx7J "
     "--profile ci", "Yb3Nc5Md7Pf9Rh1Tj3Vl5Xn7Zp9Br1Dt3Fv5Hx7J", ("--profile ci",)),
    ("spaces", "rclone config create s3remote s3 provider AWS access_key_id AKIAIOSFODNN7EXAMPLE "
     "secret_access_key Hc4Jd6Kf8Lg0Mh2Ni4Oj6Pk8Ql0", "Hc4Jd6Kf8Lg0Mh2Ni4Oj6Pk8Ql0", ("secret_access_key",
     "provider AWS")),
    ("spaces", "rclone config update b2 account 0012ab key K001Zx9Lm2Qw7Tb4Vn1", "K001Zx9Lm2Qw7Tb4Vn1",
     ("rclone config update b2 account 0012ab key",)),
    ("spaces", "token                  hvs.CAESIJxT4mQ2Lp9Zw7Rb1Vn5Kc8Hs3Df6Ga0Ye2Ju4Io6",
     "hvs.CAESIJxT4mQ2Lp9Zw7Rb1Vn5Kc8Hs3Df6Ga0Ye2Ju4Io6",
     ("token",)),
    ("spaces", "token                  s.Xq7Lm2Zp9Wt4Rb1Vn5Kc8Hs3", "s.Xq7Lm2Zp9Wt4Rb1Vn5Kc8Hs3", ("token",)),
    ("spaces", "sentry-cli --apiKey Sn7Tq2Lm9Zx4Wp releases new 1.2", "Sn7Tq2Lm9Zx4Wp", ("--apiKey",
     "releases new 1.2")),
    ("spaces", "codecov --auth=Cv3Lm8Qz2Xw7 -f coverage.xml", "Cv3Lm8Qz2Xw7", ("--auth=", "-f coverage.xml")),
    ("spaces", "gitlab-runner register --non-interactive --registration-token GR1348941Ab2Cd3Ef4Gh5 --executor docker",
     "GR1348941Ab2Cd3Ef4Gh5", ("--registration-token", "--executor docker")),
    ("spaces", "az storage container create -n logs --account-key Ak7Lm2Qz9Xw4Tp1Rb8Vn5== --account-name acct",
     "Ak7Lm2Qz9Xw4Tp1Rb8Vn5==", ("--account-key", "--account-name acct")),
    ("spaces", "datadog-ci synthetics run-tests --with-api-key Dd4Lm9Qz2Xw7Tp1Rb8Vn5Kc3", "Dd4Lm9Qz2Xw7Tp1Rb8Vn5Kc3",
     ("--with-api-key", "run-tests")),
    ("spaces", "lftp -u ftpuser --pass Ft9Lm2Qz7 ftp.example.com", "Ft9Lm2Qz7", ("--pass", "ftp.example.com")),
    ("spaces", "./install.sh --admin-password Adm7Qz2Lm9 --host 0.0.0.0", "Adm7Qz2Lm9", ("--admin-password", "--host")),
    ("spaces", "cli login --client-secret Cs9Qz2Lm7Xw4 --tenant acme", "Cs9Qz2Lm7Xw4", ("--client-secret",
     "--tenant acme")),
    # attached short flags
    ("short-flags", "mysql -u root -pS3cr3tPw db", "S3cr3tPw", ("mysql -u root -p", " db")),
    ("short-flags", "mysql -h 10.0.0.4 -u app -p'W1th Space' appdb", "W1th Space", ("-u app", "appdb")),
    ("short-flags", 'mysqldump -u bk -p"Qu0ted!Pw" --all-databases', "Qu0ted!Pw", ("mysqldump -u bk",
     "--all-databases")),
    ("short-flags", "podman login -u bot -p Pm4Lq9Zx2 registry.example.com", "Pm4Lq9Zx2",
     ("podman login -u bot -p", "registry.example.com")),
    ("short-flags", "podman login --username bot --password Pm7Lq2Zx9 quay.io", "Pm7Lq2Zx9", ("--password", "quay.io")),
    ("short-flags", "redis-cli -a Rc8Lq3Zx7 ping", "Rc8Lq3Zx7", ("redis-cli -a", "ping")),
    ("short-flags", "redis-cli --pass Rp2Lq9Zx4 -h cache get k", "Rp2Lq9Zx4", ("redis-cli --pass", "-h cache get k")),
    ("short-flags", "redis-cli --askpass -h cache -a Ra5Lq1Zx8 info", "Ra5Lq1Zx8", ("-h cache -a", "info")),
    ("short-flags", 'curl -u ":ghp_2Lm9Qz7Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6" https://api.github.com/user',
     "ghp_2Lm9Qz7Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6", ("https://api.github.com/user",)),
    ("short-flags", "curl -u :Tk7Lm2Qz9Xw4 https://api.example.com/x", "Tk7Lm2Qz9Xw4", ("curl -u :",
     "https://api.example.com/x")),
    # values with spaces
    ("spaces-in-value", "password: correct horse battery staple", "correct horse battery staple", ("password:",)),
    ("spaces-in-value", "  smtp_password: my long pass phrase", "my long pass phrase", ("smtp_password:",)),
    ("spaces-in-value", "- secret: green apple 9 sky", "green apple 9 sky", ("- secret:",)),
    ("spaces-in-value", "DB_PASSWORD=\"two words 7\"", "two words 7", ("DB_PASSWORD=",)),
    ("spaces-in-value", "api_key = 'quoted key with spaces 4'", "quoted key with spaces 4", ("api_key =",)),
    ("spaces-in-value", "<password>hunter two 22</password>", "hunter two 22", ("<password>", "</password>")),
    ("spaces-in-value", "    <add key=\"x\"/><apiKey>Ak9 Lm2 Qz7</apiKey>", "Ak9 Lm2 Qz7", ("<apiKey>", "</apiKey>")),
    ("spaces-in-value", "config.smtp = { :user_name => \"ci\", :password => \"ruby pass 9\" }", "ruby pass 9",
     (":password =>", ":user_name => \"ci\"")),
    ("spaces-in-value", "{ :secret => 'rb Secret 5', :user => 'x' }", "rb Secret 5", (":secret =>", ":user => 'x'")),
    ("spaces-in-value", "_auth = dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw==", ("_auth =",)),
    ("spaces-in-value", "_auth=Y2k6Y2lwYXNz", "Y2k6Y2lwYXNz", ("_auth=",)),
    ("spaces-in-value",
     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zk4mWq9LrT2vXb7NZk4mWq9LrT2vXb7N+/=="
     ";EndpointSuffix=core.windows.net", "Zk4mWq9LrT2vXb7NZk4mWq9LrT2vXb7N+/==",
     ("AccountName=acct", "EndpointSuffix=core.windows.net")),
    ("spaces-in-value",
     "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Sk3Lm9Qz2Xw7=",
     "Sk3Lm9Qz2Xw7=", ("SharedAccessKeyName=Root", "Endpoint=sb://ns.servicebus.windows.net/")),
    ("spaces-in-value", "Server=db;Database=app;User Id=sa;Password=My Pass 123;TrustServerCertificate=true",
     "My Pass 123", ("User Id=sa", "TrustServerCertificate=true")),
    ("spaces-in-value", "token: ${GH_TOKEN:-ghp_9Lm2Qz7Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6}",
     "ghp_9Lm2Qz7Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6", ("token:",)),
    ("spaces-in-value", "API_KEY=${API_KEY:-Ak2Lm9Qz7Xw4}", "Ak2Lm9Qz7Xw4", ("API_KEY",)),
    ("spaces-in-value", "password=${DB_PASS-devPass99}", "devPass99", ("password=",)),
    # vendor tokens by shape
    ("vendor", "VAULT_TOKEN=hvs.CAESIKd7Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4J",
     "hvs.CAESIKd7Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4J",
     ("VAULT_TOKEN",)),
    ("vendor", "using hvs.AAAAAQKq7Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8 for approle",
     "hvs.AAAAAQKq7Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8",
     ("using", "for approle")),
    ("vendor", "postman-key PMAK-6123abcd4567ef890123abcd-a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7",
     "PMAK-6123abcd4567ef890123abcd-a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7", ("postman-key",)),
    ("vendor", "docker login -u ci -p dckr_pat_Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0", "dckr_pat_Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0",
     ("docker login -u ci -p",)),
    ("vendor", "SENDGRID=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",
     "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", ("SENDGRID",)),
    ("vendor", "sending via SG.Lm2Qz9Xw4Tp1Rb8Vn5Kc3H.s6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga",
     "SG.Lm2Qz9Xw4Tp1Rb8Vn5Kc3H.s6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga", ("sending via",)),
    ("vendor", "NEW_RELIC_API_KEY: NRAK-ABCDEFGHIJKLMNOPQRSTUVWXYZ1", "NRAK-ABCDEFGHIJKLMNOPQRSTUVWXYZ1",
     ("NEW_RELIC_API_KEY",)),
    ("vendor", "agent started, key NRAK-Q2LM9ZX7WT4BR8VN5KC3HS6DF0G", "NRAK-Q2LM9ZX7WT4BR8VN5KC3HS6DF0G",
     ("agent started, key",)),
    ("vendor", "git clone https://gitlab-ci-token:glcbt-64_Lm2Qz9Xw4Tp1Rb8Vn5Kc@gitlab.com/g/p.git",
     "glcbt-64_Lm2Qz9Xw4Tp1Rb8Vn5Kc", ("@gitlab.com/g/p.git", "gitlab-ci-token:")),
    ("vendor", "job token glcbt-2a_Qz9Xw4Tp1Rb8Vn5Kc3Hs6D", "glcbt-2a_Qz9Xw4Tp1Rb8Vn5Kc3Hs6D", ("job token",)),
    ("vendor", "AZURE_CLIENT_SECRET=abc8Q~Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju",
     "abc8Q~Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju",
     ("AZURE_CLIENT_SECRET",)),
    ("vendor", "az login --service-principal -u 1b2c -p Zq18Q~k9Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Y --tenant t",
     "Zq18Q~k9Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Y", ("--service-principal -u 1b2c -p", "--tenant t")),
    ("vendor", "key2 Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw==",
     "Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw==", ("key2",)),
    ("vendor",
     '"primaryKey": "k9Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Q/+=="',
     "k9Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Q/+==", ('"primaryKey"',)),
    ("vendor", "-H 'DD-APPLICATION-KEY: 0a1b2c3d4e5f60718293a4b5c6d7e8f901234567'",
     "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", ("DD-APPLICATION-KEY",)),
    ("vendor", "dd-application-key: fedcba9876543210fedcba9876543210fedcba98",
     "fedcba9876543210fedcba9876543210fedcba98",
     ("dd-application-key",)),
    ("vendor", "DD_APP_KEY=1234567890abcdef1234567890abcdef12345678", "1234567890abcdef1234567890abcdef12345678",
     ("DD_APP_KEY",)),
    ("vendor", "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     ()),
    ("vendor", "ci-user,Pw0rd!x,AKIAZ7Q2W3E4R5T6Y7U8,Tr4Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6I,https://1.signin.aws",
     "Tr4Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6I", ("ci-user", "https://1.signin.aws")),
    # URLs
    ("url", "https://deploy:p@ssw0rd@git.example.com/r.git", "p@ssw0rd", ("https://deploy:", "@git.example.com/r.git")),
    ("url", "postgres://app:a@b@c9@db.internal:5432/prod", "a@b@c9", ("postgres://app:", "@db.internal:5432/prod")),
    ("url",
     "origin\thttps://x-access-token:ghs_Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6I@github.com/acme/infra.git (fetch)",
     "ghs_Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6I", ("x-access-token:", "@github.com/acme/infra.git (fetch)")),
    ("url", "remote: https://oauth2:Oa7Lm2Qz9Xw4@gitlab.example.com/g/p.git", "Oa7Lm2Qz9Xw4",
     ("oauth2:", "@gitlab.example.com/g/p.git")),
    ("url", "GET /callback?code=Ab7Lm2Qz9Xw4Tp1Rb8&state=s1 302", "Ab7Lm2Qz9Xw4Tp1Rb8", ("/callback?code=",
     "&state=s1 302")),
    ("url", "http://api.weather.io/v1?city=Paris&appid=ab12cd34ef56ab12cd34ef56ab12cd34",
     "ab12cd34ef56ab12cd34ef56ab12cd34",
     ("city=Paris&appid=",)),
    ("url", "https://x.blob.core.windows.net/c?sp=r&Sig=Lm2Qz9Xw4%2BTp1%3D&se=2026", "Lm2Qz9Xw4%2BTp1%3D",
     ("sp=r&Sig=", "&se=2026")),
    ("url", "https://api.example.com/v1?TOKEN=Tk9Lm2Qz7Xw4", "Tk9Lm2Qz7Xw4", ("https://api.example.com/v1?TOKEN=",)),
    ("url", "https://hooks.example.com/x?Api_Key=Ak4Lm9Qz2Xw7&x=1", "Ak4Lm9Qz2Xw7", ("&x=1",)),
    ("url", "https://svc.example.com/cb?refresh_token=Rt4Lm9Qz2Xw7Tp1", "Rt4Lm9Qz2Xw7Tp1",
     ("https://svc.example.com/cb?",)),
    # authorization schemes
    ("auth-scheme", "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
     "SignedHeaders=content-type;host;x-amz-date, "
     "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
     "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
     ("SignedHeaders=content-type;host;x-amz-date",)),
    ("auth-scheme", "> authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/us-west-2/s3/aws4_request,"
     "SignedHeaders=host;range;x-amz-date,Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
     "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024", ("SignedHeaders=host;range;x-amz-date",)),
    ("auth-scheme", 'Authorization: Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", '
     'algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEt", '
     'qop=auth, response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", opaque="FQhe"',
     "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
     ('username="Mufasa"', 'realm="http-auth@example.org"', 'uri="/dir/index.html"')),
    ("auth-scheme", 'Digest username="ci", realm="api", uri="/x", response="0a1b2c3d4e5f60718293a4b5c6d7e8f9"',
     "0a1b2c3d4e5f60718293a4b5c6d7e8f9", ('username="ci"', 'realm="api"', 'uri="/x"')),
    # key material without a name
    ("key-material", "  client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
     "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB", ("client-key-data:",)),
    ("key-material", "  ssh-privatekey: LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJuTnph",
     "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJuTnph", ("ssh-privatekey:",)),
    ("key-material", "data LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Fo end",
     "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Fo", ("data", "end")),
    ("key-material", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Lm2Qz9Xw4Tp1Rb8Vn5Kc3",
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Lm2Qz9Xw4Tp1Rb8Vn5Kc3", ()),
    ("key-material", "MIIEowIBAAKCAQEA7Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8",
     "MIIEowIBAAKCAQEA7Lm2Qz9Xw4Tp1Rb8Vn5Kc3Hs6Df0Ga2Ye4Ju6Io8Lm2Qz9Xw4Tp1Rb8", ()),
    # GitHub Actions' mask command prints the value it masks
    ("add-mask", "::add-mask::Mk7Lm2Qz9Xw4Tp1", "Mk7Lm2Qz9Xw4Tp1", ("::add-mask::",)),
]
# CI-log prefixes, and colour around the value or around the name (the first word kept)
CI_PREFIXES = ["2026-11-30T10:00:01.1234567Z ", "##[group]", "##[debug]", "[Pipeline] sh\n+ ", "::debug::"]


def forms(line: str, secret: str, kept: tuple[str, ...]) -> list[tuple[str, str]]:
    """A case as it shows in a console: plain, coloured around the value, coloured around the name, after CI-log
    prefixes; (line, form)."""
    out = [(line, "plain"), (line.replace(secret, f"\x1b[33m{secret}\x1b[0m", 1), "coloured value")]
    if kept and kept[0] in line:
        out.append((line.replace(kept[0], f"\x1b[1;36m{kept[0]}\x1b[0m", 1), "coloured name"))
    out += [(prefix + line, "ci") for prefix in CI_PREFIXES]
    return out


BENIGN_CASES: list[tuple[str, str]] = [
    ("reference", "echo %GITHUB_TOKEN%"), ("reference", "set PASSWORD=%DB_PASSWORD%"),
    ("reference", "token: ${TOKEN:?must be set}"), ("reference", "API_KEY=${API_KEY:?}"),
    ("reference", "password=`cat /run/secrets/db_password`"), ("reference", "echo \\${NPM_TOKEN}"),
    ("reference", "//registry.npmjs.org/:_authToken=\\${NPM_TOKEN}"), ("reference", "export API_TOKEN=$API_TOKEN"),
    ("reference", "set -gx API_TOKEN $API_TOKEN"), ("reference", "setenv TOKEN \"${TOKEN}\""),
    ("reference", "aws configure set aws_secret_access_key \"$AWS_SECRET_ACCESS_KEY\""),
    ("reference", "curl -u \":$TOKEN\" https://api"), ("reference", "mysql -u root -p\"$MYSQL_PWD\""),
    ("reference", "--apiKey $SENTRY_KEY"), ("reference", "redis-cli -a \"$REDIS_PASSWORD\" ping"),
    ("reference", "podman login -u bot -p \"$(cat pw)\" quay.io"), ("reference", "<password>${DB_PASS}</password>"),
    ("message", "passwd: password updated successfully"), ("message", "unexpected token: EOF"),
    ("message", "Parse error: unexpected token: '}'"), ("message",
     "Using --password via the CLI is insecure. Use --password-stdin."),
    ("message", "WARNING! Using --password via the CLI is insecure."), ("message", "Login Succeeded"),
    ("message", "Error: secret \"db\" not found"), ("message", "Invalid token: expired"),
    ("message", "authentication failed for user app: password authentication failed"),
    ("message", "token                  n/a"), ("message",
     "token_accessor         8609694a-cdbc-db9b-d345-e782dbb562ed"),
    ("message", "token_renewable        false"), ("message", "token_policies         [\"root\"]"),
    ("message", "Key                    Value"),
    ("arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-k7nWKY"),
    ("arn", "SecretArn: arn:aws:secretsmanager:eu-central-1:111122223333:secret:app/token-Xy12Zq"),
    ("cli", "kubectl create secret generic app --from-file=password=./password.txt"),
    ("cli", "kubectl create secret generic tls --from-file=key=./tls.key"),
    ("cli", "docker login --password-stdin -u bot ghcr.io"), ("cli", "cat pw | podman login --password-stdin quay.io"),
    ("cli", "set -gx PATH $HOME/bin $PATH"), ("cli", "setenv EDITOR vim"), ("cli", "aws configure set output json"),
    ("cli", "rclone config create r s3 provider AWS env_auth true"), ("cli", "--auth none"),
    ("cli", "gh auth login --with-token < token.txt"), ("cli", "mysql -p"), ("cli", "git push -u origin main"),
    ("cli", "tar -pcf out.tar dir"), ("cli", "ssh -p 2222 host"), ("cli", "redis-cli -a"),
    ("masked", "GITHUB_TOKEN: gho_************"), ("masked", "password: ***"), ("masked", "token=•••••••"),
    ("hash",
     "integrity sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="),
    ("hash", "commit 0123456789abcdef0123456789abcdef01234567"), ("hash", "id 550e8400-e29b-41d4-a716-446655440000"),
    ("hash", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("url", "https://example.com/?code=&state=x"), ("url", "https://github.com/acme/infra.git"),
    ("url", "https://user@example.com/path"), ("url", "https://example.com/search?q=sig"),
    ("prose", "password: must be at least 12 characters"), ("prose", "Password"), ("prose", "token"),
    ("prose", "tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURkekNDQWwrZ0F3SUJBZ0lFYg=="),
    ("prose", "public key LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0KTUlJQklqQU5CZ2txaGtpRzl3MEI="),
    ("prose", "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTESMBAGA1UE"),
    ("prose", "grep: -----BEGIN is not a flag"), ("prose", "the private key is in ~/.ssh"),
    ("prose", "SignedHeaders=host;x-amz-date"), ("prose", "WWW-Authenticate: Digest realm=\"api\", qop=\"auth\""),
    ("prose", "echo \"::add-mask::$TOKEN\""),
    # code printed to a console (cat, git diff): names passed on, not values
    ("code", "client = WebClient(token=os.environ['SLACK_BOT_TOKEN'])"),
    ("code", "const token = process.env.API_TOKEN;"),
    ("code", "    app_token: str = Field(default=\"\", max_length=500)"),
    ("code", "def authenticate(self, token: str) -> None:"),
    ("code", "    web = AsyncWebClient(token=bot_token, base_url=base_url)"),
    ("code", "    \"copilot_token\": \"COPILOT_GITHUB_TOKEN\","), ("code", "password = hash(password, salt)"),
]
