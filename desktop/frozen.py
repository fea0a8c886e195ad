"""The frozen bundle's entry point, behind both of its programs: `coxswain` (the tray app) and `cox` (the command
line), and the bundle re-entering itself as the detached runner or the MCP relay (desktop.reentry). The flags are
read before anything heavy is imported, so the helpers start fast."""

import sys
from pathlib import Path


def main() -> int:
    from desktop.reentry import RELAY_FLAG, RUNNER_FLAG

    if len(sys.argv) > 1 and sys.argv[1] == RUNNER_FLAG:
        from desktop.tasks import runner

        return runner.main(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == RELAY_FLAG:
        from desktop.mcp import relay

        return relay.main([sys.argv[0], *sys.argv[2:]])
    if Path(sys.argv[0]).stem.lower() == "cox":  # cox.exe on Windows, a symlink to this program elsewhere
        from desktop import cli

        return cli.main()
    from desktop.gui import app

    return app.main()


if __name__ == "__main__":
    sys.exit(main())
