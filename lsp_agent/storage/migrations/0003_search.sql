-- 0003: full-text search over every session (`sessions search`, `agent/session/search`).
--
-- `search_entries` is a projection like the others: one row per finished piece of text, written
-- by storage/search_index.py in the append's transaction once the piece is complete (a user
-- message when promoted, an assistant message's text and reasoning when it ends, a tool call's
-- input and its output or error when it reaches a final status), never per streamed delta.
-- `search_text` is an FTS5 index over it (external content: the text is stored once, in
-- `search_entries`), kept in step by the triggers below; deleting a session cascades to its
-- entries and so out of the index.

CREATE TABLE search_entries (
    entry_id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    message_id TEXT NOT NULL,
    source_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (
        kind IN ('user', 'assistant', 'reasoning', 'tool_input', 'tool_output')
    ),
    text TEXT NOT NULL
);

CREATE INDEX search_entries_by_message ON search_entries (message_id);
CREATE INDEX search_entries_by_session ON search_entries (session_id);

CREATE VIRTUAL TABLE search_text USING fts5(
    text,
    content = 'search_entries',
    content_rowid = 'entry_id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER search_entries_added AFTER INSERT ON search_entries
BEGIN
    INSERT INTO search_text (rowid, text) VALUES (new.entry_id, new.text);
END;

CREATE TRIGGER search_entries_removed AFTER DELETE ON search_entries
BEGIN
    INSERT INTO search_text (search_text, rowid, text) VALUES ('delete', old.entry_id, old.text);
END;

-- The backfill: what the projections already hold (they are the events, replayed) and the live
-- projector would have indexed. User messages are the ones that came through the inbox (a
-- context note is a user-role message too, but not the user's words).

INSERT INTO search_entries (session_id, message_id, source_id, kind, text)
SELECT p.session_id, p.message_id, p.part_id,
       CASE WHEN m.role = 'user' THEN 'user' WHEN p.type = 'text' THEN 'assistant'
            ELSE 'reasoning' END,
       json_extract(p.data, '$.text')
FROM parts AS p
JOIN messages AS m ON m.message_id = p.message_id
WHERE p.type IN ('text', 'reasoning')
  AND COALESCE(json_extract(p.data, '$.text'), '') != ''
  AND (m.role = 'assistant' AND m.status != 'streaming'
       OR m.role = 'user' AND m.message_id IN (SELECT message_id FROM inbox))
ORDER BY m.seq, p.position;

INSERT INTO search_entries (session_id, message_id, source_id, kind, text)
SELECT t.session_id, t.message_id, t.tool_call_id || ':input', 'tool_input', t.input
FROM tool_calls AS t
WHERE t.status IN ('completed', 'failed', 'cancelled', 'interrupted')
ORDER BY t.rowid;

INSERT INTO search_entries (session_id, message_id, source_id, kind, text)
SELECT t.session_id, t.message_id, t.tool_call_id || ':output', 'tool_output',
       trim(COALESCE(t.output, '') || char(10) || COALESCE(t.error, ''), char(10))
FROM tool_calls AS t
WHERE t.status IN ('completed', 'failed', 'cancelled', 'interrupted')
  AND COALESCE(t.output, '') || COALESCE(t.error, '') != ''
ORDER BY t.rowid;
