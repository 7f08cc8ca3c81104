"""The warm path: a per-user agent process that ``lsp-agent run`` drives (docs/configuration.md
"Warm path"). ``client`` is what ``run`` imports (almost nothing); ``server`` is the process
that keeps the agent's modules loaded and forks one child per run; ``paths`` says where its
socket and log live and who may open them; ``wire`` is the framing between them."""
