"""The task console pipeline: pure functions over the bytes a command writes (no Qt, nothing from the layers above).
`ConsoleStream` puts the stages together; `ansi`, `redact` and `testruns` are the stages."""
