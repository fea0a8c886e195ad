"""The environment that points the four agent CLIs at the fake model on loopback, with their update checks,
telemetry and other traffic switched off."""

import os
from pathlib import Path

AGENT_CLIS = Path(__file__).resolve().parent.parent / ".cache" / "agent-clis" / "node_modules" / ".bin"
CODEX_CONFIG = """model = "gpt-5.5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""
GEMINI_SETTINGS = """{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "privacy": {"usageStatisticsEnabled": false},
 "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}"""


def offline_env(folder: Path, url: str) -> dict[str, str]:
    clis = os.environ.get("COXSWAIN_AGENT_CLIS", str(AGENT_CLIS))
    assert Path(clis, "claude").exists(), f"the agent CLIs are not installed in {clis}; run .ci/run"
    codex_home = folder / "codex-home"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=url))
    user_home = folder / "user-home"
    (user_home / ".gemini").mkdir(parents=True, exist_ok=True)
    (user_home / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    return {
        "PATH": f"{clis}:{os.environ['PATH']}",
        "HOME": str(user_home),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
        "COPILOT_PROVIDER_API_KEY": "fake-provider-key",
        "COPILOT_MODEL": "gpt-5.5",
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": "fake-key",
        "CODEX_HOME": str(codex_home),
        "OPENAI_API_KEY": "fake-key",
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "fake-key",
        "CLAUDE_CONFIG_DIR": str(folder / "claude-config"),
        "NO_PROXY": "127.0.0.1,localhost",
        "HTTPS_PROXY": "",
        "HTTP_PROXY": "",
    }
