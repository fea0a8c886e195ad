"""Settings → Chat on a real daemon with a real keyring, against the fake Slack: tokens the chat refuses are said in
its words; good ones connect; a chat user is mapped to a person; disconnecting says so."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.dbus import until
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.gui_fixture import person, run


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    server = FakeSlack().start()
    yield server
    server.stop()


def test_slack_is_connected_and_people_mapped_from_settings(
    desktop_with_keyring: Any, qloop: Any, slack: FakeSlack
) -> None:
    app = desktop_with_keyring

    async def scenario() -> None:
        await person(app, "sarah")
        window = await app.open_settings()
        panel = window.chat
        window.tabs.setCurrentWidget(panel)
        assert panel.state.text() == "No chat connected."
        panel.base_url = slack.url
        panel.kind.setCurrentText("slack")
        assert panel.fields["app_token"].isVisibleTo(panel) and not panel.fields["app_secret"].isVisibleTo(panel)
        panel.fields["app_token"].setText(APP_TOKEN)
        panel.fields["bot_token"].setText("xoxb-wrong")
        await panel.connect_chat()
        assert panel.status.text() == "Slack refused the tokens: invalid_auth"
        panel.fields["bot_token"].setText(BOT_TOKEN)
        panel.channel.setText("C9")
        await panel.connect_chat()
        assert panel.status.text() == "Connected to Acme as coxswain."
        assert panel.fields["bot_token"].text() == "", "a token does not stay in the window"
        await until(slack.connected)
        await panel.load()
        assert panel.state.text() == "slack: connected; other requests in C9"
        panel.chat_user.setText("U_SARAH")
        panel.person.setText("sarah")
        await panel.map_person()
        assert panel.state.text() == "slack: connected; other requests in C9\n    U_SARAH is sarah"
        panel.person.setText("nobody-here")
        await panel.map_person()
        assert panel.status.text() == "there is no person 'nobody-here'"
        await panel.remove_chat()
        assert panel.status.text() == "Disconnected slack." and panel.state.text() == "No chat connected."

    run(qloop, scenario())
