-- 0001: the event log and the projections derived from it.
--
-- `events` is the truth and is append-only (rows are never updated). Every other table is a
-- projection: storage/projections.py writes it from events in the same transaction, and
-- `SqliteEventStore.rebuild_projections()` can delete and replay it at any time.
-- JSON columns hold compact `json.dumps` text.

CREATE TABLE events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL CHECK (seq > 0),
    type TEXT NOT NULL,
    version INTEGER NOT NULL,
    time TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TRIGGER events_append_only BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    workspace_folder TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'requires_action', 'idle')),
    stop_reason TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    context_used INTEGER NOT NULL DEFAULT 0,
    context_size INTEGER NOT NULL DEFAULT 0,
    cost REAL,
    last_seq INTEGER NOT NULL
);

CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, session_id DESC);
CREATE INDEX sessions_by_workspace ON sessions (workspace_folder, updated_at DESC);

-- `seq` is the seq of the event that put the message into the conversation (promotion for a
-- user message, start for an assistant message): the transcript is ordered by it.
CREATE TABLE messages (
    message_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    status TEXT NOT NULL CHECK (status IN ('streaming', 'completed', 'interrupted', 'failed')),
    model TEXT,
    step INTEGER,
    finish_reason TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    ended_at TEXT,
    UNIQUE (session_id, seq)
);

CREATE TABLE parts (
    part_id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL REFERENCES messages (message_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('text', 'reasoning', 'tool_call')),
    data TEXT NOT NULL,
    UNIQUE (message_id, position)
);

CREATE INDEX parts_by_session ON parts (session_id);

CREATE TABLE tool_calls (
    tool_call_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    message_id TEXT NOT NULL REFERENCES messages (message_id) ON DELETE CASCADE,
    tool_name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (
        status IN ('pending', 'in_progress', 'completed', 'failed', 'cancelled', 'interrupted')
    ),
    input TEXT NOT NULL,
    output TEXT,
    error TEXT,
    title TEXT,
    kind TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX tool_calls_by_session ON tool_calls (session_id, status);
CREATE INDEX tool_calls_by_message ON tool_calls (message_id);

-- The inbox: durable user input. `promoted_seq` stays NULL until the input joins the
-- conversation.
CREATE TABLE inbox (
    message_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    content TEXT NOT NULL,
    client_message_id TEXT,
    admitted_seq INTEGER NOT NULL,
    promoted_seq INTEGER,
    admitted_at TEXT NOT NULL,
    UNIQUE (session_id, admitted_seq),
    UNIQUE (session_id, promoted_seq)
);

CREATE UNIQUE INDEX inbox_by_client_message_id ON inbox (session_id, client_message_id)
    WHERE client_message_id IS NOT NULL;
CREATE INDEX inbox_pending ON inbox (session_id, promoted_seq, admitted_seq);
