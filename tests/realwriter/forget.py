"""nanobot-ai 0.3.5's own deletions, on a home its own code wrote (for
`ledger::nanobots_own_deletions_leave_the_ledger_whole`, tests/ledger.rs).

    python forget.py HOME

HOME is moved to the harness's fixed path for the time (nanobot derives a
workspace's namespace from its absolute path: elsewhere it would migrate
the sessions first) and moved back, files' mtimes kept. In its `.nanobot`
instance, with nanobot's own code:

1. `/new` of a chat: `SessionManager.delete_session` of the first chat
   session that is neither the CLI's nor a WebUI chat (its JSONL is gone);
2. a WebUI chat deleted as the WebUI deletes one: `delete_session` of the
   first `websocket:` session and `delete_webui_thread` (its transcript and
   segments);
3. the usage store pruned by its own retention code
   (`LLMUsageStore._prune_if_due`, `MAX_DAYS_RETAINED` = 400 days), the
   clock moved (time-machine) to 400 days after the day after its oldest
   call, by recording one call then: the calls of that first day go.

Prints one JSON line: the keys deleted and the calls before and after.
No LLM, no network; only nanobot's code writes to HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import fixed_root  # noqa: E402  (nanobot-free)
from harness import env  # noqa: E402


def main() -> None:
    target = Path(sys.argv[1]).resolve()
    with fixed_root(env.FIXED_ROOT, [env.WORK_DIR], keep=False):
        shutil.copytree(target, env.FIXED_HOME, symlinks=True)
        result = forget(env.FIXED_HOME)
        shutil.rmtree(target)
        shutil.copytree(env.FIXED_HOME, target, symlinks=True)
    print(json.dumps(result))


def forget(home: Path) -> dict:
    os.environ["HOME"] = str(home)
    instance = home / ".nanobot"

    from datetime import datetime, timedelta, timezone

    import time_machine
    from nanobot.config.loader import load_config, set_config_path
    from nanobot.llm_usage.models import LLMCallRecord
    from nanobot.llm_usage.store import MAX_DAYS_RETAINED, LLMUsageStore
    from nanobot.session.manager import SessionManager
    from nanobot.webui.thread_disk import delete_webui_thread

    set_config_path(instance / "config.json")
    config = load_config()
    manager = SessionManager(config.workspace_path, sessions_root=instance / "sessions")
    keys = sorted(info["key"] for info in manager.list_sessions())
    chat = next(k for k in keys if not k.startswith(("cli:", "websocket:")))
    webui = next(k for k in keys if k.startswith("websocket:"))
    deleted = {
        "chat": chat,
        "chat_deleted": manager.delete_session(chat),
        "webui": webui,
        "webui_deleted": manager.delete_session(webui),
        "webui_transcript_deleted": delete_webui_thread(webui),
    }

    usage = instance / "llm_usage.sqlite3"
    with sqlite3.connect(usage) as c:
        (oldest,) = c.execute("SELECT min(started_at_ms) FROM llm_calls").fetchone()
    store = LLMUsageStore(usage)
    before = store.count()
    now = datetime.fromtimestamp(oldest / 1000, timezone.utc) + timedelta(days=MAX_DAYS_RETAINED + 1)
    with time_machine.travel(now, tick=False):
        store.record(
            LLMCallRecord(
                started_at_ms=int(now.timestamp() * 1000),
                duration_ms=1200,
                provider="anthropic",
                model="claude-sonnet-4-5",
                source="user",
                stream=True,
                finish_reason="stop",
            )
        )
    after = store.count()
    store.close()
    return {**deleted, "calls_before": before, "calls_after": after, "now_ms": int(now.timestamp() * 1000)}


if __name__ == "__main__":
    main()
