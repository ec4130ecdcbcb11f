"""A small nanoclaw install root for benches/gen_home.py --nanoclaw-sessions K.

The DDL of every database (tables and indexes, in creation order) and the
`schema_version` rows are copied at run time from
fixtures/nanoclaw/home-2-0, which nanoclaw 2.0.64's own code wrote; the rows
follow that fixture's shapes (EXPECTED-home-2-0.md): one agent group, a
telegram DM messaging group per session, per session `inbound.db`
(`messages_in` kind `chat-sdk` with the Chat SDK message JSON, even seq;
`delivered` with the platform message id; `session_routing`;
`destinations`) and `outbound.db` (`messages_out` `{"text": …}`, odd seq;
`processing_ack`). Times: JavaScript ISO `…Z` in v2.db and messages_in,
SQLite `YYYY-MM-DD HH:MM:SS` in messages_out/delivered/processing_ack, all
UTC. No Claude Code transcripts, no session_state, no groups/ folder.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import random
import sqlite3

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "nanoclaw", "home-2-0", "data")
B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _schema(path: str) -> tuple[list[str], str]:
    c = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        ddl = [sql for (sql,) in c.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
        mode = c.execute("PRAGMA journal_mode").fetchone()[0]
        return ddl, mode
    finally:
        c.close()


def _insert(db: sqlite3.Connection, table: str, row: dict) -> None:
    cols = ", ".join(row)
    db.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))


def _js(ms: int) -> str:
    t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _sql(ms: int) -> str:
    t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _id(rng: random.Random, prefix: str, ms: int) -> str:
    return f"{prefix}-{ms}-{''.join(rng.choices(B36, k=6))}"


def _chat_message(pid: str, chat: str, text: str, ms: int, user: tuple[str, str, str]) -> str:
    end = {"line": 1, "column": len(text) + 1, "offset": len(text)}
    pos = {"start": {"line": 1, "column": 1, "offset": 0}, "end": end}
    formatted = {"type": "root", "children": [{"type": "paragraph", "children": [
        {"type": "text", "value": text, "position": pos}], "position": pos}], "position": pos}
    uid, uname, full = user
    return json.dumps({"_type": "chat:Message", "id": pid, "threadId": f"telegram:{chat}", "text": text,
                       "formatted": formatted,
                       "author": {"userId": uid, "userName": uname, "fullName": full, "isBot": False, "isMe": False},
                       "metadata": {"dateSent": _js(ms), "edited": False}, "attachments": [], "isMention": False,
                       "senderId": uid, "sender": full, "senderName": full}, ensure_ascii=False,
                      separators=(",", ":"))


def write(root: str, sessions: int, seed: int, prose=None) -> int:
    """Write the install root; returns the number of nanoload events expected: a row per messages_in,
    messages_out (its delivered row folds into it), processing_ack, session_routing, destinations row,
    and per catalog row (schema_version, agent group, messaging group, wiring, user, session)."""
    rng = random.Random(f"nanoload-bench:{seed}:nanoclaw")
    if prose is None:
        from gen_home import prose  # noqa: PLC0415
    data = os.path.join(root, "data")
    os.makedirs(data)
    v2_ddl, v2_mode = _schema(os.path.join(FIXTURE, "v2.db"))
    sess_fixture = os.path.join(FIXTURE, "v2-sessions", "ag-1796047793683-1wwid2", "sess-1796047793731-5u7ezf")
    in_ddl, in_mode = _schema(os.path.join(sess_fixture, "inbound.db"))
    out_ddl, out_mode = _schema(os.path.join(sess_fixture, "outbound.db"))
    fx = sqlite3.connect(f"file:{os.path.join(FIXTURE, 'v2.db')}?mode=ro&immutable=1", uri=True)
    versions = fx.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()
    fx.close()

    t0 = int(dt.datetime(2026, 6, 1, 9, tzinfo=dt.timezone.utc).timestamp() * 1000)
    v2 = sqlite3.connect(os.path.join(data, "v2.db"), isolation_level=None)
    v2.execute(f"PRAGMA journal_mode = {v2_mode}")
    v2.execute("BEGIN")
    for sql in v2_ddl:
        v2.execute(sql)
    for version, name in versions:
        _insert(v2, "schema_version", {"version": version, "name": name, "applied": _js(t0 + version)})
    ag = _id(rng, "ag", t0)
    _insert(v2, "agent_groups", {"id": ag, "name": "Andy", "folder": "main", "agent_provider": None,
                                 "created_at": _js(t0)})
    events = 1 + len(versions)
    t = t0 + 60_000
    for k in range(sessions):
        chat = str(rng.randint(10**9, 10**10 - 1))
        full = rng.choice(["Priya Raman", "Jonas Weber", "Ana Souza", "Kenji Sato", "Mia Novak"])
        user = (chat, full.lower().replace(" ", "_"), full)
        mg = _id(rng, "mg", t)
        _insert(v2, "messaging_groups", {"id": mg, "channel_type": "telegram", "platform_id": f"telegram:{chat}",
                                         "name": full, "is_group": 0, "unknown_sender_policy": "strict",
                                         "created_at": _js(t), "denied_at": None})
        _insert(v2, "messaging_group_agents", {"id": _id(rng, "mga", t), "messaging_group_id": mg,
                                               "agent_group_id": ag, "session_mode": "shared", "priority": 0,
                                               "created_at": _js(t), "engage_mode": "pattern",
                                               "engage_pattern": ".", "sender_scope": "all",
                                               "ignored_message_policy": "drop"})
        _insert(v2, "users", {"id": f"telegram:{chat}", "kind": "telegram", "display_name": full,
                              "created_at": _js(t)})
        sid = _id(rng, "sess", t + 40)
        sdir = os.path.join(data, "v2-sessions", ag, sid)
        os.makedirs(sdir)
        inbound = sqlite3.connect(os.path.join(sdir, "inbound.db"), isolation_level=None)
        outbound = sqlite3.connect(os.path.join(sdir, "outbound.db"), isolation_level=None)
        for db, ddl, mode in ((inbound, in_ddl, in_mode), (outbound, out_ddl, out_mode)):
            db.execute(f"PRAGMA journal_mode = {mode}")
            db.execute("BEGIN")
            for sql in ddl:
                db.execute(sql)
        _insert(inbound, "session_routing", {"id": 1, "channel_type": "telegram",
                                             "platform_id": f"telegram:{chat}", "thread_id": None})
        _insert(inbound, "destinations", {"name": user[1].replace("_", "-"), "display_name": full,
                                          "type": "channel", "channel_type": "telegram",
                                          "platform_id": f"telegram:{chat}", "agent_group_id": None})
        seq = 2
        msg_no = 4101
        first_in = None
        turns = rng.randint(3, 12)
        for _ in range(turns):
            text = prose(rng, int(rng.lognormvariate(4.6, 0.8)))
            pid = f"{chat}:{msg_no}"
            mid = f"{pid}:{ag}"
            first_in = first_in or mid
            _insert(inbound, "messages_in", {
                "id": mid, "seq": seq, "kind": "chat-sdk", "timestamp": _js(t), "status": "completed",
                "process_after": None, "recurrence": None, "series_id": mid, "tries": 0, "trigger": 1,
                "platform_id": f"telegram:{chat}", "channel_type": "telegram", "thread_id": None,
                "content": _chat_message(pid, chat, text, t, user), "source_session_id": None, "on_wake": 0})
            t_reply = t + rng.randint(3000, 40000)
            oid = _id(rng, "msg", t_reply)
            reply = prose(rng, int(rng.lognormvariate(5.8, 0.8)))
            _insert(outbound, "messages_out", {
                "id": oid, "seq": seq + 1, "in_reply_to": first_in, "timestamp": _sql(t_reply),
                "deliver_after": None, "recurrence": None, "kind": "chat", "platform_id": f"telegram:{chat}",
                "channel_type": "telegram", "thread_id": None,
                "content": json.dumps({"text": reply}, ensure_ascii=False, separators=(",", ":"))})
            _insert(inbound, "delivered", {"message_out_id": oid, "platform_message_id": f"{chat}:{msg_no + 1}",
                                            "status": "delivered", "delivered_at": _sql(t_reply + 800)})
            _insert(outbound, "processing_ack", {"message_id": mid, "status": "completed",
                                                 "status_changed": _sql(t_reply + 900)})
            events += 3
            seq += 2
            msg_no += 2
            t = t_reply + rng.randint(60_000, 6 * 3_600_000)
        for db in (inbound, outbound):
            db.execute("COMMIT")
            db.close()
        _insert(v2, "sessions", {"id": sid, "agent_group_id": ag, "messaging_group_id": mg, "thread_id": None,
                                 "agent_provider": None, "status": "active", "container_status": "stopped",
                                 "last_active": _js(t), "created_at": _js(t0 + 60_000 + k)})
        events += 6
        t += rng.randint(60_000, 3_600_000)
    v2.execute("COMMIT")
    v2.close()
    return events
