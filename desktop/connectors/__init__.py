"""Chat connectors: each request's own thread in Slack or Feishu, titled with its ID, following it to the end."""
