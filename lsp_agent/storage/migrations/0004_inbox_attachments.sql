-- 0004: what a prompt's links and mentions named, attached when it was admitted
-- (`user_message_admitted.attachments`, core/attachments.py): a JSON list of
-- {text, source}, turned into parts the model is sent when the input is promoted.

ALTER TABLE inbox ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
