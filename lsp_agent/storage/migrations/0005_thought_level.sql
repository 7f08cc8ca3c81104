-- 0005: a session's thought level (`config_changed` with configId `thought_level`,
-- core/session/config_options.py): `default` follows the configuration.

ALTER TABLE sessions ADD COLUMN thought_level TEXT NOT NULL DEFAULT 'default';
