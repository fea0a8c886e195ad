"""The `cox` command. Everything but `cox daemon` talks to the running daemon over its HTTP API."""

import argparse
import codecs
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from desktop.api.client import Client, DaemonError
from desktop.console.redact import Redactor
from desktop.console.stream import ConsoleStream, Line, folded
from desktop.core.states import state_word
from desktop.core.visible import one_line, visible
from desktop.platform.paths import Home

SHOW_FIELDS = ("id", "state", "agent", "requester", "prompt", "retry_of", "continuation_of", "references",
               "session_ref", "progress", "result", "exit_code", "created_at", "expires_at", "started_at", "ended_at")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    home = Home.resolve(args.home)
    try:
        code: int = args.handler(home, args)
        sys.stdout.flush()  # here, where a closed pipe can be caught, not at exit
        return code
    except DaemonError as error:
        print(f"cox: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cox list | head`: the reader has what it wanted (the Python docs' way, no traceback)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit writes to nothing
        return 141  # as a program killed by SIGPIPE: 128 + 13


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cox", description="Coxswain: your team's coding agents, on your laptop.")
    parser.add_argument("--home", help="keep every file of this installation under HOME (or set COXSWAIN_HOME)")
    parser.add_argument("--version", action="version", version=f"cox {_version()}")
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler: Callable[[Home, argparse.Namespace], int], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    task = sub.add_parser("task", help="background tasks: commands and monitors left running").add_subparsers(
        metavar="ACTION", required=True)
    p = task.add_parser("start", help="run a command in an agent's folder, in the background; prints its ID")
    p.add_argument("--agent", required=True)
    p.add_argument("--description", default="", help="what it is, in a few words")
    p.add_argument("--monitor", action="store_true", help="a command whose output is the point (tail -f, …)")
    p.add_argument("command", nargs="+")
    p.set_defaults(handler=_task_start)
    p = task.add_parser("list", help="running tasks, and those that ended in the last hour")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_task_list)
    p = task.add_parser("output", help="a task's console: its last lines (older pages with --before)")
    p.add_argument("id")
    p.add_argument("--lines", type=int, default=2000, help="how many console lines (at most 2000)")
    p.add_argument("--before", type=int, help="the cursor printed under the previous page")
    p.add_argument("--plain", action="store_true", help="without colours")
    p.set_defaults(handler=_task_output)
    p = task.add_parser("stop", help="stop a task (SIGTERM, then SIGKILL after stop_grace)")
    p.add_argument("id")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post(f"/api/tasks/{a.id}/stop", {}),
                                               lambda t: f"{t['id']}: {t['status']}"))

    console = sub.add_parser("console", help="the task console's pipeline over any output (stdin to stdout)")
    console_actions = console.add_subparsers(metavar="ACTION", required=True)
    p = console_actions.add_parser("render", help="raw terminal output to console lines (colours kept unless --plain)")
    p.add_argument("--plain", action="store_true", help="without colour codes")
    p.set_defaults(handler=_console_render)
    console_actions.add_parser("redact", help="only redact secrets").set_defaults(handler=_console_redact)
    console_actions.add_parser("tests", help="test counts as JSON: runner, passed, failed, skipped, first_failure"
                               ).set_defaults(handler=_console_tests)

    p = command("autostart", _autostart, "start the tray app at login (on | off | status)")
    p.add_argument("switch", choices=["on", "off", "status"], nargs="?", default="status")

    p = command("daemon", _daemon, "run the daemon in the foreground (no tray)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 7431; 0 picks a free one)")

    agent = sub.add_parser("agent", help="add, change, remove and list agents").add_subparsers(metavar="ACTION",
                                                                                             required=True)
    setup = argparse.ArgumentParser(add_help=False)
    setup.add_argument("--runtime", required=True, help="shell (built in), claude, codex, gemini, copilot")
    setup.add_argument("--folder", required=True, help="the folder the agent works in")
    setup.add_argument("--model", help="the model the runtime uses")
    setup.add_argument("--permission-mode", help="claude: default, acceptEdits, plan, dontAsk, bypassPermissions; "
                                                 "codex: read-only, workspace-write, danger-full-access")
    setup.add_argument("--effort", help="claude: low, medium, high, xhigh, max; codex: minimal, low, medium, high, "
                                        "xhigh")
    setup.add_argument("--sessions", choices=("once", "ask"),
                       help="when agent sessions are on: once (you approve a conversation's first session, the "
                            "default) or ask (every session action waits for you)")
    setup.add_argument("--arg", action="append", default=[], help="an extra argument for the CLI (repeatable)")
    setup.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                       help="an environment variable for the CLI (repeatable; secrets go in the keyring)")
    p = agent.add_parser("add", help="add an agent", parents=[setup])
    p.add_argument("name")
    p.set_defaults(handler=_agent_add)
    p = agent.add_parser("change", help="give an agent another runtime, folder or options (all are given again)",
                         parents=[setup])
    p.add_argument("name")
    p.set_defaults(handler=_agent_change)
    p = agent.add_parser("remove", help="remove an agent (its past requests keep its name)")
    p.add_argument("name")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post(f"/api/agents/{a.name}/remove", {}),
                                               lambda done: f"removed agent {done['removed']}"))
    agent.add_parser("list", help="list agents").set_defaults(handler=lambda h, a: _print(
        _client(h).get("/api/agents"), lambda rows: _table(rows, ("name", "runtime", "status", "state", "folder"))))

    person = sub.add_parser("person", help="people who may send requests").add_subparsers(metavar="ACTION",
                                                                                         required=True)
    p = person.add_parser("add", help="add a person; prints their token once")
    p.add_argument("name")
    p.add_argument("--machine", action="store_true", help="a machine rather than a person")
    p.set_defaults(handler=_person_add)
    p = person.add_parser("revoke", help="revoke a person: their token stops working, their waiting requests end")
    p.add_argument("name")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post(f"/api/people/{a.name}/revoke", {}), lambda r: (
        f"revoked {r['name']}" + (f"; cancelled {', '.join(r['cancelled'])}" if r["cancelled"] else ""))))
    person.add_parser("list", help="list people and machines").set_defaults(handler=lambda h, a: _print(
        _client(h).get("/api/people"), lambda rows: _table(rows, ("name", "kind", "created_at", "revoked_at"))))
    p = person.add_parser("link", help="a one-time link that signs a person (or 'owner') in to the room; "
                                       "good for 15 minutes")
    p.add_argument("name")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post("/api/room/link", {"person": a.name}), lambda r: (
        f"{r['url']}\n(one use, until {r['expires_at']}; share it only with {a.name})")))

    connector = sub.add_parser("connector", help="chat connectors: each request's thread in Slack or Feishu"
                               ).add_subparsers(metavar="ACTION", required=True)
    p = connector.add_parser("add", help="connect a chat; reads its secrets from standard input, one per line "
                                         "(Slack: the app token xapp-…, then the bot token xoxb-…; Feishu: the app "
                                         "secret)")
    p.add_argument("kind", choices=["slack", "feishu"])
    p.add_argument("--app-id", help="Feishu: the app's App ID (cli_…)")
    p.add_argument("--channel", help="the channel for the threads of requests sent from elsewhere (CLI, room)")
    p.add_argument("--base-url", help=argparse.SUPPRESS)  # another API address (tests, Enterprise Grid proxies)
    p.set_defaults(handler=_connector_add)
    p = connector.add_parser("map", help="say which person a chat user is (their requests and clicks count as "
                                         "theirs); 'owner' for you")
    p.add_argument("kind")
    p.add_argument("chat_user", help="the chat's user ID (Slack: U…; Feishu: the open_id, ou_…)")
    p.add_argument("person", help="a person's name, or '-' to forget the chat user")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post(f"/api/connectors/{a.kind}/people", {
        "chat_user": a.chat_user, "person": None if a.person == "-" else a.person}),
        lambda r: f"{a.kind} user {r['chat_user']} is {r['person'] or 'nobody now'}"))
    connector.add_parser("list", help="connectors, whether they are connected, and who is who").set_defaults(
        handler=lambda h, a: _print(_client(h).get("/api/connectors"), _connector_table))
    p = connector.add_parser("remove", help="disconnect a chat (its threads stay in the chat)")
    p.add_argument("kind")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post(f"/api/connectors/{a.kind}/remove", {}),
                                               lambda r: f"removed {r['removed']}"))

    session = sub.add_parser("session", help="sessions agents started (switch them on: cox settings set "
                                             "agent_sessions yes)").add_subparsers(metavar="ACTION", required=True)
    session.add_parser("list", help="every session, its state, who started it").set_defaults(
        handler=lambda h, a: _print(_client(h).get("/api/sessions"), _session_table))
    p = session.add_parser("may-create", help="let a session an agent started start sessions itself (or not)")
    p.add_argument("session")
    p.add_argument("allowed", choices=["yes", "no"])
    p.set_defaults(handler=lambda h, a: _print(_client(h).post(f"/api/sessions/{a.session}", {
        "may_create_sessions": a.allowed == "yes"}), lambda r: _session_table([r])))
    p = session.add_parser("group", help="make a group agents may name when they start sessions")
    p.add_argument("name")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post("/api/session-groups", {"name": a.name}),
                                               lambda r: "groups: " + ", ".join(r)))

    command("room", lambda h, a: _print(_client(h).get("/api/room"), _room_text),
            "where the room (the web page for phones) is reached; change it with `cox settings set room_address`")

    p = command("request", _request, "send a request to an agent; prints its ID")
    p.add_argument("--agent", required=True)
    p.add_argument("prompt", nargs="+")

    p = command("list", _list, "list requests, newest first")
    p.add_argument("--state", help="only requests in this state")
    p.add_argument("--json", action="store_true")

    p = command("show", _show, "show one request with its timeline")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")

    for verb, help in (("approve", "approve a pending request"), ("deny", "deny a pending request"),
                       ("cancel", "cancel a request (a running one stops at its next safe point)")):
        p = command(verb, _action(verb), help)
        p.add_argument("id")
    p = command("answer", _answer, "answer the question a running request's agent is waiting on")
    p.add_argument("id")
    p.add_argument("text", nargs="+")
    command("pause", lambda h, a: _print(_client(h).post("/api/agents/pause", {}),
                                         lambda r: "paused: nothing new starts on any agent (what runs goes on)"),
            "pause all agents")
    command("resume", lambda h, a: _print(_client(h).post("/api/agents/resume", {}), lambda r: "resumed"),
            "resume all agents")
    p = command("retry", _retry, "send a request again as a new request; prints the new ID")
    p.add_argument("id")

    p = command("logs", _logs, "print a request's output")
    p.add_argument("id")
    p.add_argument("--follow", "-f", action="store_true", help="keep printing until the request ends")

    settings = sub.add_parser("settings", help="read and change settings").add_subparsers(metavar="ACTION",
                                                                                        required=True)
    p = settings.add_parser("get", help="print settings")
    p.add_argument("key", nargs="?")
    p.set_defaults(handler=_settings_get)
    p = settings.add_parser("set", help="change a setting")
    p.add_argument("key")
    p.add_argument("value")
    p.set_defaults(handler=lambda h, a: _print(_client(h).post("/api/settings", {"key": a.key, "value": a.value}),
                                               lambda r: f"{a.key} = {r[a.key]}"))

    secret = sub.add_parser("secret", help="API keys the agents use, kept in the OS keyring").add_subparsers(
        metavar="ACTION", required=True)
    p = secret.add_parser("set", help="store a secret; the value is read from standard input, never echoed")
    p.add_argument("name", help="anthropic_api_key, openai_api_key, gemini_api_key or copilot_token")
    p.set_defaults(handler=_secret_set)
    listing = secret.add_parser("list", help="which secrets are stored (never their values)")
    listing.set_defaults(handler=lambda h, a: _print(_client(h).get("/api/secrets"), _secret_table))

    p = command("audit", _audit, "print the audit log, or check it")
    p.add_argument("check", nargs="?", choices=["verify"], help="verify the hash chain")
    p.add_argument("--json", action="store_true")
    return parser


def _daemon(home: Home, args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from desktop.daemon import run
    from desktop.platform.instance import AlreadyRunning
    from desktop.platform.paths import DEFAULT_PORT

    home.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    home.log.parent.mkdir(exist_ok=True)
    logging.basicConfig(filename=home.log, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    try:
        asyncio.run(run(home, args.host, DEFAULT_PORT if args.port is None else args.port))
    except AlreadyRunning as error:
        print(f"cox: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"cox: cannot listen on {args.host}:{args.port}: {error.strerror}", file=sys.stderr)
        return 1
    return 0


def _task_start(home: Home, args: argparse.Namespace) -> int:
    body = {"agent": args.agent, "command": " ".join(args.command), "description": args.description,
            "kind": "monitor" if args.monitor else "command"}
    return _print(_client(home).post("/api/tasks", body), lambda t: t["id"])


def _task_list(home: Home, args: argparse.Namespace) -> int:
    rows = _client(home).get("/api/tasks")
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        tests = row["tests"]
        row["tests"] = f"{tests['passed']}✓ {tests['failed']}✗ {tests['skipped']}○" if tests else ""
        row["what"] = row["description"] or row["command"]
        row["status"] += " · quiet" if row["quiet"] else ""
    print(_table(rows, ("id", "agent", "kind", "status", "tests", "started_at", "what")) if rows
          else "no background tasks")
    return 0


def _task_output(home: Home, args: argparse.Namespace) -> int:
    query = f"?lines={args.lines}" + (f"&before={args.before}" if args.before is not None else "")
    page = _client(home).get(f"/api/tasks/{args.id}/output{query}" + ("&plain=true" if args.plain else ""))
    if page["older_not_loaded"]:
        print("… older output not loaded")
    elif page["before"] is not None:
        print(f"… older: cox task output {args.id} --before {page['before']}")
    for line in page["lines"]:
        print(line)
    if page["pending"]:
        print(page["pending"])
    if page["note"]:
        print(f"── {page['note']}")
    return 0


def _stdin_chunks() -> Iterator[bytes]:
    """Standard input as it arrives (not waiting for a full buffer: a live command is piped in)."""
    while chunk := os.read(0, 1 << 16):
        yield chunk


def _console_render(home: Home, args: argparse.Namespace) -> int:
    stream, out = ConsoleStream(colours=not args.plain), sys.stdout
    shown: Line | None = None  # the last line, held back while it may still repeat

    def show(lines: list[Line]) -> None:
        nonlocal shown
        for line in lines:
            if shown is not None and line.index != shown.index:
                out.write(folded(shown.text, shown.count) + "\n")
            shown = line

    for chunk in _stdin_chunks():
        show(stream.feed(chunk))
    show(stream.finish())
    show([Line(-1, "", 0)])
    return 0


def _console_redact(home: Home, args: argparse.Namespace) -> int:
    redactor, decoder, partial = Redactor(), codecs.getincrementaldecoder("utf-8")("replace"), ""
    for chunk in _stdin_chunks():
        *complete, partial = (partial + decoder.decode(chunk)).split("\n")
        if complete:
            sys.stdout.write(redactor.lines("\n".join(complete)) + "\n")
    rest = partial + decoder.decode(b"", final=True)
    sys.stdout.write(redactor.lines(rest) if rest else "")
    return 0


def _console_tests(home: Home, args: argparse.Namespace) -> int:
    stream = ConsoleStream(colours=False)
    for chunk in _stdin_chunks():
        stream.feed(chunk)
    stream.finish()
    print(json.dumps(stream.tests.summary()))
    return 0


def _autostart(home: Home, args: argparse.Namespace) -> int:
    from desktop.platform import autostart

    if args.switch == "on":
        print(f"Coxswain starts at login ({autostart.enable()})")
    elif args.switch == "off":
        autostart.disable()
        print("Coxswain no longer starts at login")
    else:
        print("Coxswain starts at login" if autostart.enabled() else "Coxswain does not start at login")
    return 0


def _client(home: Home) -> Client:
    return Client.for_home(home, os.environ.get("COX_TOKEN"))


def _print(result: Any, text: Callable[[Any], str]) -> int:
    print(text(result))
    return 0


def _agent_setup(args: argparse.Namespace) -> dict[str, Any]:
    env = {}
    for pair in args.env:
        name, equals, value = pair.partition("=")
        if not equals:
            raise DaemonError(f"--env takes NAME=VALUE, not '{pair}'")
        env[name] = value
    return {"runtime": args.runtime, "folder": os.path.abspath(os.path.expanduser(args.folder)), "model": args.model,
            "permission_mode": args.permission_mode, "args": args.arg, "env": env, "effort": args.effort,
            "sessions": args.sessions}


def _agent_add(home: Home, args: argparse.Namespace) -> int:
    made = _client(home).post("/api/agents", {"name": args.name, **_agent_setup(args)})
    print(f"added agent {made['name']} ({made['runtime']}) in {made['folder']}; {made['status']}")
    return 0


def _agent_change(home: Home, args: argparse.Namespace) -> int:
    made = _client(home).post(f"/api/agents/{args.name}/change", _agent_setup(args))
    print(f"agent {made['name']} is now {made['runtime']} in {made['folder']}; {made['status']}")
    return 0


def _secret_table(answer: dict[str, Any]) -> str:
    if answer["problem"]:
        return str(answer["problem"])
    return "\n".join(f"{name:<20} {'stored' if name in answer['stored'] else '-'}" for name in answer["known"])


def _secret_set(home: Home, args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        import getpass

        value = getpass.getpass(f"{args.name}: ")
    else:
        value = sys.stdin.readline()
    _client(home).post("/api/secrets", {"name": args.name, "value": value.strip()})
    print(f"stored {args.name} in the keyring")
    return 0


def _connector_add(home: Home, args: argparse.Namespace) -> int:
    asked = ["App secret"] if args.kind == "feishu" else ["App token (xapp-…)", "Bot token (xoxb-…)"]
    if sys.stdin.isatty():
        import getpass

        given = [getpass.getpass(f"{what}: ") for what in asked]
    else:
        given = [*sys.stdin.read().split(), "", ""]
    secrets = {"app_secret": given[0]} if args.kind == "feishu" else {"app_token": given[0], "bot_token": given[1]}
    made = _client(home).post("/api/connectors", {"kind": args.kind, **secrets, "app_id": args.app_id or "",
                                                  "channel": args.channel, "base_url": args.base_url})
    print(f"connected {made['name']}: {made['connected_to']}")
    return 0


def _connector_table(rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows:
        state = "connected" if row["connected"] else f"not connected{': ' + row['problem'] if row['problem'] else ''}"
        lines.append(f"{row['name']}: {state}; threads of other requests in {row['channel'] or '(none)'}")
        lines += [f"  {user} is {person}" for user, person in row["people"].items()]
    return visible("\n".join(lines)) or "no connectors"


def _session_table(rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows:
        group = f" · Group: {row['group']}" if row["group"] else ""
        may = " · may create sessions" if row["may_create_sessions"] else ""
        lines.append(visible(f"{row['session']} {row['state']}: {row['title']} ({row['runtime']} in {row['folder']}; "
                             f"via agent · {row['parent_title']}{group}{may})").replace("\n", " ⏎ "))
    return "\n".join(lines) or "no sessions"


def _room_text(room: dict[str, Any]) -> str:
    lines = [f"on this computer: {room['local_url']}"]
    if room["url"]:
        lines.append(f"on the network:   {room['url']}  (certificate SHA-256 {room['fingerprint']})")
    elif room["problem"]:
        lines.append(f"on the network:   not served: {room['problem']}")
    else:
        lines.append("on the network:   off (cox settings set room_address <an address of this computer>)")
    return "\n".join(lines)


def _person_add(home: Home, args: argparse.Namespace) -> int:
    made = _client(home).post("/api/people", {"name": args.name, "kind": "machine" if args.machine else "person"})
    print(f"added {made['kind']} {made['name']}. Their token (shown only now; they set COX_TOKEN to it):",
          file=sys.stderr)
    print(made["token"])
    return 0


def _request(home: Home, args: argparse.Namespace) -> int:
    made = _client(home).post("/api/requests", {"agent": args.agent, "prompt": " ".join(args.prompt)})
    print(made["id"])
    return 0


def _list(home: Home, args: argparse.Namespace) -> int:
    rows = _client(home).get("/api/requests", params={"state": args.state} if args.state else None)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        shown = [dict(r, prompt=one_line(r["prompt"], 50), state=state_word(r["state"], r.get("denied", False)))
                 for r in rows]  # (an older daemon's rows have no "denied")
        print(_table(shown, ("id", "state", "agent", "requester", "prompt")))
    return 0


def _show(home: Home, args: argparse.Namespace) -> int:
    row = _client(home).get(f"/api/requests/{args.id}")
    if args.json:
        print(json.dumps(row, indent=2))
        return 0
    row["state"] = state_word(row["state"], row.get("denied", False))
    for key in SHOW_FIELDS:
        value = row.get(key)
        if value not in (None, [], ""):
            shown = ", ".join(value) if isinstance(value, list) else value
            print(f"{key:>12}: {visible(str(shown))}")
    if row.get("question"):
        asked = row["question"]
        choices = f"  [{' / '.join(asked['options'])}]" if asked["options"] else ""
        print(f"{'question':>12}: {visible(asked['question'] + choices)}  (answer: cox answer {row['id']} …)")
    print("    timeline:")
    for entry in row["timeline"]:
        print(f"      {entry['at']}  {entry['state']:<9}  {visible(entry['text'])}")
    return 0


def _answer(home: Home, args: argparse.Namespace) -> int:
    return _print(_client(home).post(f"/api/requests/{args.id}/answer", {"text": " ".join(args.text)}),
                  lambda q: f"answered {q['request_id']}: {one_line(q['question'], 200)} → "
                            f"{one_line(q['answer'], 200)}")


def _action(verb: str) -> Callable[[Home, argparse.Namespace], int]:
    def act(home: Home, args: argparse.Namespace) -> int:
        row = _client(home).post(f"/api/requests/{args.id}/{verb}", {})
        note = " (stops at the next safe point)" if verb == "cancel" and row["state"] == "running" else ""
        print(f"{row['id']} is {state_word(row['state'], row.get('denied', False))}{note}")
        return 0

    return act


def _retry(home: Home, args: argparse.Namespace) -> int:
    print(_client(home).post(f"/api/requests/{args.id}/retry", {})["id"])
    return 0


def _logs(home: Home, args: argparse.Namespace) -> int:
    client, offset = _client(home), 0
    while True:
        chunk = client.get(f"/api/requests/{args.id}/output", params={"offset": offset})
        sys.stdout.write(chunk["text"])
        sys.stdout.flush()
        moved = chunk["offset"] != offset
        offset = chunk["offset"]
        if not args.follow or (not moved and chunk["state"] in ("done", "failed", "cancelled", "expired")):
            return 0
        if not moved:
            time.sleep(0.3)


def _settings_get(home: Home, args: argparse.Namespace) -> int:
    values = _client(home).get("/api/settings")
    if args.key:
        if args.key not in values:
            raise DaemonError(f"there is no setting '{args.key}'; known settings: {', '.join(sorted(values))}")
        print(values[args.key])
    else:
        for key, value in sorted(values.items()):
            print(f"{key} = {value}")
    return 0


def _audit(home: Home, args: argparse.Namespace) -> int:
    client = _client(home)
    if args.check == "verify":
        result = client.get("/api/audit/verify")
        if result["intact"]:
            print(f"audit log intact: {result['records']} records")
            return 0
        print(f"audit log broken at record {result['first_bad']}: {result['problem']}", file=sys.stderr)
        return 1
    rows = client.get("/api/audit")
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['seq']:>6}  {r['at']}  {visible(r['actor']):<20} {r['action']:<12} {r['request_id'] or '-':<14} "
                  f"{one_line(r['reason'], 60)}")
    return 0


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    if not rows:
        return "(none)"
    cells = [[one_line(str(r.get(c) if r.get(c) is not None else "-"), 1000) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("coxswain")
    except PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
