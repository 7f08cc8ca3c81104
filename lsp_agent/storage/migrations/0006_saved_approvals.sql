-- 0006: saved approvals belong to their scope, not to the session that gave them.
--
-- "Always allow" is saved for the project (its workspace folder URI): deleting the session
-- that gave it keeps it. "Allow for this session" goes with its session (deleted with it,
-- storage/event_log.py). Both are listed and revoked (`lsp-agent permissions list|revoke`,
-- `agent/permissions/list|revoke`). A row per answer (the `permission_resolved` event that
-- gave it); a revoked row is kept with `revoked_at`, so that replaying the log
-- (rebuild_projections) never brings a revoked approval back. Not a projection table: a
-- rebuild leaves it as it is and only adds what is missing.

CREATE TABLE saved_approvals (
    scope TEXT NOT NULL CHECK (scope IN ('session', 'project')),
    scope_id TEXT NOT NULL,
    permission TEXT NOT NULL,
    pattern TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    PRIMARY KEY (session_id, seq, permission, pattern)
);

CREATE INDEX saved_approvals_scope ON saved_approvals (scope, scope_id);

INSERT INTO saved_approvals (scope, scope_id, permission, pattern, session_id, seq, created_at)
    SELECT scope, scope_id, permission, pattern, session_id, seq, created_at FROM approvals;

DROP TABLE approvals;
