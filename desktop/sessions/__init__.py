"""Agent sessions, a feature folder: each module sits in the layer of what it does (desktop/README.md).
`sql` (store: the tables), `views` and `rules` (core: what an agent is told, what it may do), `watching` (tasks: news
for the conversations that watch a session), `tools` (mcp: the session tools), `routes` (api: `/api/sessions`)."""
