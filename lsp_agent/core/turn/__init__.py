"""One turn of the agent: ask the model, run the tools it calls, feed the results back,
repeat. ``loop`` is the spine (``TurnRunner.run``/``_step``); the rest are its parts: the
response stream with retries (``response_stream``, ``retry``), tool calls and the circuit
breaker (``tool_calls``, ``breaker``, ``call_events``), snapshots around steps
(``snapshot_steps``), what the model is sent (``model_view``), what is open in the log
(``records``, ``recorder``) and the turn's configuration (``setup``).
"""
