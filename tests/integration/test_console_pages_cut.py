"""A console page begins and ends where the caller says, and a live console reads a page at a time: neither may cut
a secret from what makes it one. A teammate who names an offset inside a line gets the next whole line; a private
key whose printing spans two reads (or a page boundary) stays redacted to its END line."""

import subprocess
from pathlib import Path

from tests.daemon_process import DaemonProcess

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"[:36]


def private_key() -> list[str]:
    return subprocess.run(["openssl", "genrsa", "2048"], capture_output=True, text=True, check=True).stdout.splitlines()


def test_an_offset_inside_a_line_reads_from_the_next_line(daemon: DaemonProcess) -> None:
    sarah = daemon.add_person("sarah")
    row = daemon.request(
        f"echo 'export DB_PASSWORD=hunter2-very-secret'; a=ghp_; echo \"token ${{a}}{TOKEN[4:]}\"; echo after",
        token=sarah,
    )
    daemon.post(f"/api/requests/{row['id']}/approve")
    daemon.wait_state(row["id"], "done")
    url = f"/api/requests/{row['id']}"
    whole = daemon.get(f"{url}/console", token=sarah).json()["lines"]
    assert whole == ["export DB_PASSWORD=[redacted]", "token [redacted]", "after"]
    first_line = len("export DB_PASSWORD=hunter2-very-secret\n")
    for cut in (len("export DB_PASSWORD="), first_line + len("token ghp_"), first_line + len("token ghp_aB3dE5")):
        page = daemon.get(f"{url}/console", token=sarah, params={"after": cut}).json()
        raw = daemon.get(f"{url}/output", token=sarah, params={"offset": cut}).json()
        earlier = daemon.get(f"{url}/console", token=sarah, params={"before": cut}).json()
        for shown in (page["lines"], [raw["text"]], earlier["lines"]):
            assert not any("hunter2" in line or "aB3dE5" in line for line in shown), (cut, shown)
        assert page["lines"][-1] == "after" and raw["text"].endswith("after\n")
    huge = daemon.get(f"{url}/output", token=sarah, params={"offset": 2**62})
    assert huge.status_code == 200 and huge.json()["text"] == ""


def test_a_private_key_printed_across_two_live_reads_stays_redacted(daemon: DaemonProcess) -> None:
    key = private_key()
    work = daemon.home / "workspace"
    (work / "k1").write_text("\n".join(key[:12]) + "\n")
    (work / "k2").write_text("\n".join(key[12:]) + "\n")
    row = daemon.request("cat k1; while [ ! -e go ]; do sleep 0.05; done; cat k2; echo after the key")
    url = f"/api/requests/{row['id']}"
    first = daemon.get(f"{url}/console", params={"after": 0}).json()
    while not first["lines"]:  # the first half printed, the second not yet
        first = daemon.get(f"{url}/console", params={"after": 0}).json()
    raw_first = daemon.get(f"{url}/output", params={"offset": 0}).json()
    (work / "go").touch()
    daemon.wait_state(row["id"], "done")
    rest = daemon.get(f"{url}/console", params={"after": first["end"]}).json()
    raw_rest = daemon.get(f"{url}/output", params={"offset": raw_first["offset"]}).json()
    shown = "\n".join([*first["lines"], *rest["lines"], raw_first["text"], raw_rest["text"]])
    assert not [line for line in key[1:-1] if line in shown], "a line of the key's body is shown in the clear"
    assert rest["lines"][-1] == "after the key" and raw_rest["text"].endswith("after the key\n")


def test_cox_logs_keeps_a_key_redacted_across_its_read_boundary(daemon: DaemonProcess, tmp_path: Path) -> None:
    """255 lines of 1 KiB, then a key: its lines straddle the 256 KiB a read takes."""
    key = private_key()
    (daemon.home / "workspace" / "key.pem").write_text("\n".join(key) + "\n")
    row = daemon.request("for i in $(seq 1 255); do printf '%01023d\\n' $i; done; cat key.pem; echo after the key")
    daemon.wait_state(row["id"], "done")
    for options in ([], ["--raw"]):
        printed = daemon.cox("logs", *options, row["id"], check=True).stdout
        assert not [line for line in key[1:-1] if line in printed], f"cox logs {options} shows the key's body"
        assert printed.rstrip("\n").endswith("after the key")


def test_a_cursor_past_the_end_reads_a_new_turns_output_from_its_start(tmp_path: Path) -> None:
    """A request resumed after sleep writes its next turn to a file of its own: a live console's cursor into the
    first turn's longer output reads the new one from its start, not nothing."""
    from desktop.tasks.paging import console_page

    first, second = tmp_path / "R.1", tmp_path / "R.2"
    first.write_text("".join(f"first turn line {n}\n" for n in range(500)))
    second.write_text("resumed\nstill going\n")
    cursor = console_page(first, 2000).end
    page = console_page(second, 2000, after=cursor)
    assert page.lines == ["resumed", "still going"] and page.end == second.stat().st_size
