-- V023 session_titles
-- Purpose: a name a person recognises for each session (docs/design.md
--          "Session titles"): the WebUI chat's own title where nanobot
--          stored one (session metadata `title` of the rows that start the
--          session, primary first; a generated title without its
--          `<think>`/`<thinking>`/`<thought>` blocks, as nanobot 0.3.5's
--          `_metadata_title` shows it; one the user edited,
--          `title_user_edited`, as written), else the session's first
--          `user` row with text (by ordinal): on one line (each run of
--          white space and control characters one space, trimmed) and cut
--          as nanobot cuts a WebUI title (`clean_generated_title`: past 60
--          characters, the first 59 and `…`). The text is the redacted text
--          the outputs hold. A
--          nanobot message's text is not in the engine (the stage keeps it
--          in its blob files, docs/design.md "Pipeline"): the engine reads
--          the start of it after the steps (`Engine::run_steps`) and titles
--          those sessions with the same macro.
-- Grain:   one row per session_uid (session_webui_titles: those with a
--          title; session_first_user: those with a user row with text).
-- Inputs:  session_starts (V021: j, pick), events_plan and plan_sessions
--          (V016), sessions (V021).
-- Output:  the macros session_line(text) and session_title(text, more)
--          (more: the text goes on past what was read),
--          session_webui_titles (session_uid, title),
--          session_first_user (session_uid, and its first user row's text
--          where the engine has it, else where the stage keeps it: x_blob,
--          x_off, x_text_len), sessions.title (appended; NULL: no title and
--          no user text).
-- Creates: table session_first_user, table session_webui_titles
-- a control character (an escape sequence's ESC, DEL) counts as white
-- space: a title is printed to terminals (`usage --by session`)
CREATE MACRO session_line(t) AS trim(regexp_replace(t, '[\s\pZ\p{Cc}]+', ' ', 'g'));

CREATE MACRO session_title(t, more) AS
    CASE WHEN session_line(t) = '' THEN NULL
         WHEN more OR length(session_line(t)) > 60 THEN rtrim(left(session_line(t), 59)) || '…'
         ELSE session_line(t) END;

CREATE TABLE session_webui_titles AS
SELECT session_uid, arg_min(title, pick) AS title
FROM (SELECT session_uid, pick,
          CASE WHEN (j->'metadata'->>'title_user_edited') = 'true' THEN j->'metadata'->>'title'
               ELSE regexp_replace(j->'metadata'->>'title',
                        '<(?:think|thinking|thought)>[\s\S]*?</(?:think|thinking|thought)>', '', 'g')
          END AS title
      FROM session_starts
      WHERE json_type(j->'metadata'->'title') = 'VARCHAR')
WHERE session_line(title) <> ''
GROUP BY session_uid;

CREATE TABLE session_first_user AS
SELECT s.session_uid, p.text, p.x_blob, p.x_off, p.x_text_len
FROM events_plan p
JOIN plan_sessions s USING (sess_id)
WHERE p.turn_type = 'user' AND s.session_uid IS NOT NULL
  AND (session_line(p.text) <> '' OR (p.text IS NULL AND p.x_blob IS NOT NULL AND p.x_text_len > 0))
QUALIFY row_number() OVER (PARTITION BY p.sess_id ORDER BY p.ordinal) = 1;

ALTER TABLE sessions ADD COLUMN title VARCHAR;

UPDATE sessions SET title = t.title
FROM (SELECT s.session_uid,
          coalesce(session_title(w.title, false), session_title(f.text, false)) AS title
      FROM sessions s
      LEFT JOIN session_webui_titles w USING (session_uid)
      LEFT JOIN session_first_user f USING (session_uid)) t
WHERE sessions.session_uid = t.session_uid AND t.title IS NOT NULL;
