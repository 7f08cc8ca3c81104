"""One turn of the agent: ask the model, run the tools it calls, feed the results back,
repeat. ``loop`` is the spine (``TurnRunner.run``/``_step``); the rest are its parts: the
response stream (``response_stream``; the retry policy is ``core/retry.py``), tool calls,
the permission gate and the circuit breaker (``tool_calls``, ``permission_gate``,
``breaker``, ``call_events``), snapshots around steps (``snapshot_steps``), what the model
is sent (``model_view``) and what is open in the log (``records``; the event writer is
``core/recorder.py``).
"""
