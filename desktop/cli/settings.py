"""`cox settings`, `cox secret` (API keys in the OS keyring) and `cox audit` (the log, and its hash chain)."""

import argparse
import json
import sys

from desktop.cli.common import Commands, actions, ask, command, said
from desktop.client import DaemonError, api
from desktop.client.shapes import SecretList
from desktop.core.visible import one_line, visible
from desktop.platform.paths import Home


def add(sub: Commands) -> None:
    settings = actions(sub, "settings", "read and change settings")
    p = settings.add_parser("get", help="print settings")
    p.add_argument("key", nargs="?")
    p.set_defaults(handler=_settings_get)
    p = settings.add_parser("set", help="change a setting")
    p.add_argument("key")
    p.add_argument("value")
    p.set_defaults(handler=said(lambda a: api.change_setting(a.key, a.value), lambda now, a: f"{a.key} = {now[a.key]}"))

    secret = actions(sub, "secret", "API keys the agents use, kept in the OS keyring")
    p = secret.add_parser("set", help="store a secret; the value is read from standard input, never echoed")
    p.add_argument("name", help="anthropic_api_key, openai_api_key, gemini_api_key or copilot_token")
    p.set_defaults(handler=_secret_set)
    listing = secret.add_parser("list", help="which secrets are stored (never their values)")
    listing.set_defaults(handler=said(lambda a: api.secrets(), _secret_table))

    p = command(sub, "audit", _audit, "print the audit log, or check it")
    p.add_argument("check", nargs="?", choices=["verify"], help="verify the hash chain")
    p.add_argument("--json", action="store_true")


def _settings_get(home: Home, args: argparse.Namespace) -> int:
    values = ask(home, api.settings())
    if args.key:
        if args.key not in values:
            raise DaemonError(f"there is no setting '{args.key}'; known settings: {', '.join(sorted(values))}")
        print(values[args.key])
    else:
        for key, value in sorted(values.items()):
            print(f"{key} = {value}")
    return 0


def _secret_table(answer: SecretList, args: argparse.Namespace) -> str:
    if answer.problem:
        return answer.problem
    return "\n".join(f"{name:<20} {'stored' if name in answer.stored else '-'}" for name in answer.known)


def _secret_set(home: Home, args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        import getpass

        value = getpass.getpass(f"{args.name}: ")
    else:
        value = sys.stdin.readline()
    ask(home, api.set_secret(args.name, value.strip()))
    print(f"stored {args.name} in the keyring")
    return 0


def _audit(home: Home, args: argparse.Namespace) -> int:
    if args.check == "verify":
        result = ask(home, api.verify_audit())
        if result.intact:
            print(f"audit log intact: {result.records} records")
            return 0
        print(f"audit log broken at record {result.first_bad}: {result.problem}", file=sys.stderr)
        return 1
    rows = ask(home, api.audit())
    if args.json:
        print(json.dumps([row.dump() for row in rows], indent=2))
    else:
        for r in rows:
            print(
                f"{r.seq:>6}  {r.at}  {visible(r.actor):<20} {r.action:<12} {r.request_id or '-':<14} "
                f"{one_line(r.reason, 60)}"
            )
    return 0
