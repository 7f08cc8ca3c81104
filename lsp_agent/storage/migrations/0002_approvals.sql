-- 0002: saved permission approvals, a projection of `permission_resolved` events.
--
-- An "allow for this session" answer is scoped to the session; "always allow" to the
-- session's project (its workspace folder URI). Rows are only ever added; a configured
-- deny still wins over them (core/permission.py decides).

CREATE TABLE approvals (
    scope TEXT NOT NULL CHECK (scope IN ('session', 'project')),
    scope_id TEXT NOT NULL,
    permission TEXT NOT NULL,
    pattern TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, scope_id, permission, pattern)
);
