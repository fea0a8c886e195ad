"""Who reaches the agents and where: `cox person`, `cox connector` (Slack, Feishu) and `cox room` (the web page)."""

import argparse
import sys

from desktop.cli.common import Commands, actions, ask, command, said, table
from desktop.client import api
from desktop.client.api import ChatSetup
from desktop.client.shapes import Connector, Principal, Revoked, Room
from desktop.core.visible import visible
from desktop.platform.paths import Home


def add(sub: Commands) -> None:
    person = actions(sub, "person", "people who may send requests")
    p = person.add_parser("add", help="add a person; prints their token once")
    p.add_argument("name")
    p.add_argument("--machine", action="store_true", help="a machine rather than a person")
    p.set_defaults(handler=_person_add)
    p = person.add_parser("revoke", help="revoke a person: their token stops working, their waiting requests end")
    p.add_argument("name")
    p.set_defaults(handler=said(lambda a: api.revoke(a.name), _revoked))
    person.add_parser("list", help="list people and machines").set_defaults(
        handler=said(lambda a: api.people(), _people_table)
    )
    p = person.add_parser(
        "link", help="a one-time link that signs a person (or 'owner') in to the room; good for 15 minutes"
    )
    p.add_argument("name")
    p.set_defaults(
        handler=said(
            lambda a: api.room_link(a.name),
            lambda link, a: f"{link.url}\n(one use, until {link.expires_at}; share it only with {a.name})",
        )
    )


def add_connectors(sub: Commands) -> None:
    connector = actions(sub, "connector", "chat connectors: each request's thread in Slack or Feishu")
    p = connector.add_parser(
        "add",
        help="connect a chat; reads its secrets from standard input, one per line "
        "(Slack: the app token xapp-…, then the bot token xoxb-…; Feishu: the app "
        "secret)",
    )
    p.add_argument("kind", choices=["slack", "feishu"])
    p.add_argument("--app-id", help="Feishu: the app's App ID (cli_…)")
    p.add_argument("--channel", help="the channel for the threads of requests sent from elsewhere (CLI, room)")
    p.add_argument("--base-url", help=argparse.SUPPRESS)  # another API address (tests, Enterprise Grid proxies)
    p.set_defaults(handler=_connector_add)
    p = connector.add_parser(
        "map", help="say which person a chat user is (their requests and clicks count as theirs); 'owner' for you"
    )
    p.add_argument("kind")
    p.add_argument("chat_user", help="the chat's user ID (Slack: U…; Feishu: the open_id, ou_…)")
    p.add_argument("person", help="a person's name, or '-' to forget the chat user")
    p.set_defaults(
        handler=said(
            lambda a: api.map_chat_user(a.kind, a.chat_user, None if a.person == "-" else a.person),
            lambda r, a: f"{a.kind} user {r.chat_user} is {r.person or 'nobody now'}",
        )
    )
    connector.add_parser("list", help="connectors, whether they are connected, and who is who").set_defaults(
        handler=said(lambda a: api.connectors(), _connector_table)
    )
    p = connector.add_parser("remove", help="disconnect a chat (its threads stay in the chat)")
    p.add_argument("kind")
    p.set_defaults(handler=said(lambda a: api.remove_connector(a.kind), lambda r, a: f"removed {r.removed}"))


def add_room(sub: Commands) -> None:
    command(
        sub,
        "room",
        said(lambda a: api.room(), _room_text),
        "where the room (the web page for phones) is reached; change it with `cox settings set room_address`",
    )


def _person_add(home: Home, args: argparse.Namespace) -> int:
    made = ask(home, api.add_person(args.name, args.machine))
    print(f"added {made.kind} {made.name}. Their token (shown only now; they set COX_TOKEN to it):", file=sys.stderr)
    print(made.token)
    return 0


def _revoked(r: Revoked, args: argparse.Namespace) -> str:
    return f"revoked {r.name}" + (f"; cancelled {', '.join(r.cancelled)}" if r.cancelled else "")


def _people_table(rows: list[Principal], args: argparse.Namespace) -> str:
    return table([row.dump() for row in rows], ("name", "kind", "created_at", "revoked_at"))


def _connector_add(home: Home, args: argparse.Namespace) -> int:
    asked = ["App secret"] if args.kind == "feishu" else ["App token (xapp-…)", "Bot token (xoxb-…)"]
    if sys.stdin.isatty():
        import getpass

        given = [getpass.getpass(f"{what}: ") for what in asked]
    else:
        given = [*sys.stdin.read().split(), "", ""]
    secrets = {"app_secret": given[0]} if args.kind == "feishu" else {"app_token": given[0], "bot_token": given[1]}
    made = ask(
        home,
        api.add_connector(
            ChatSetup(kind=args.kind, **secrets, app_id=args.app_id or "", channel=args.channel, base_url=args.base_url)
        ),
    )
    print(f"connected {made.name}: {made.connected_to}")
    return 0


def _connector_table(rows: list[Connector], args: argparse.Namespace) -> str:
    lines = []
    for row in rows:
        state = "connected" if row.connected else f"not connected{': ' + row.problem if row.problem else ''}"
        lines.append(f"{row.name}: {state}; threads of other requests in {row.channel or '(none)'}")
        lines += [f"  {user} is {person}" for user, person in row.people.items()]
    return visible("\n".join(lines)) or "no connectors"


def _room_text(room: Room, args: argparse.Namespace) -> str:
    lines = [f"on this computer: {room.local_url}"]
    if room.url:
        lines.append(f"on the network:   {room.url}  (certificate SHA-256 {room.fingerprint})")
    elif room.problem:
        lines.append(f"on the network:   not served: {room.problem}")
    else:
        lines.append("on the network:   off (cox settings set room_address <an address of this computer>)")
    return "\n".join(lines)
