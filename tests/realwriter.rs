//! Homes that nanobot's own code wrote (tests/realwriter/), checked against
//! `facts.json`, which the generator takes from nanobot's own readers and
//! the harness clock only (tests/realwriter/FACTS.md). Every committed home
//! under `fixtures/realwriter/`, and the home `.ci/run` generates from a
//! committed seed (`NANOLOAD_REALWRITER_GENERATED`), must pass every check.
//! On those homes, the behaviours they exercise: a symlinked instance inside
//! HOME read once under the link, one out of HOME reported until followed,
//! two workspaces' `cli:direct` kept apart, legacy `HISTORY.md` cut as
//! nanobot's migration cuts it, a record rewritten after a copy froze kept
//! as one message, a copy's metadata rows kept when only the memory journal
//! has the session. Also: every test docs/design.md names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::*;

/// `session_uid` as docs/design.md "Session identity" defines it.
pub fn session_uid(agent: &str, instance: &str, namespace: &str, key: &str) -> String {
    let d = Sha256::digest(format!("{agent}\0{instance}\0{namespace}\0{key}").as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A real-writer home ready to load: the committed directory, or the
/// committed tarball unpacked into a temp dir (kept alive here).
pub struct Home {
    pub dir: PathBuf,
    pub facts: Value,
    _unpacked: Option<tempfile::TempDir>,
}

impl Home {
    pub fn open(case: &Path) -> Result<Home, Box<dyn std::error::Error>> {
        let facts: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("facts.json"))?)?;
        match facts.get("archive").and_then(Value::as_str) {
            Some(archive) => {
                let tmp = tempfile::tempdir()?;
                let home = tmp.path().join("home");
                std::fs::create_dir(&home)?;
                let st = std::process::Command::new("tar")
                    .arg("-xzf")
                    .arg(case.join(archive))
                    .arg("-C")
                    .arg(&home)
                    .status()?;
                if !st.success() {
                    return Err(format!("tar -xzf {archive} failed").into());
                }
                Ok(Home {
                    dir: home,
                    facts,
                    _unpacked: Some(tmp),
                })
            }
            None => Ok(Home {
                dir: case.join("home"),
                facts,
                _unpacked: None,
            }),
        }
    }
}

/// Every committed real-writer case (a directory with `facts.json`).
pub fn committed_cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture("realwriter"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("facts.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn opt<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn arr<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn uid_of(instance: &str, namespace: Option<&str>, key: &str) -> String {
    session_uid("nanobot", instance, namespace.unwrap_or(""), key)
}

/// `2026-10-24T07:00:00Z` / `…T07:00:00.250000Z` → microseconds since the epoch.
fn utc_us(iso: &str) -> Option<i64> {
    chrono::NaiveDateTime::parse_from_str(iso.trim_end_matches('Z'), "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc().timestamp_micros())
}

/// A naive local time (`2026-03-02 10:00:00[.ffffff]`) as µs, read as if UTC.
fn local_us(local: &str) -> Option<i64> {
    chrono::NaiveDateTime::parse_from_str(local, "%Y-%m-%d %H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc().timestamp_micros())
}

/// `text` with every secret the harness planted replaced by `[redacted]`.
fn without_secrets(text: &str, secrets: &[&str]) -> String {
    secrets
        .iter()
        .fold(text.to_string(), |t, s| t.replace(s, "[redacted]"))
}

/// An output text with each `[redacted:<rule>]` marker as `[redacted]`: the
/// checks hold the scanner to the harness's list of planted secrets, not to
/// its own rule names.
fn rule_names_dropped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("[redacted:") {
        out.push_str(&rest[..i]);
        match rest[i..].find(']') {
            Some(j) => {
                out.push_str("[redacted]");
                rest = &rest[i + j + 1..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// One primary session-store row of the output, as the checks compare it.
#[derive(Debug, Clone)]
struct PrimaryRow {
    turn_type: String,
    /// tool_use_id, else text
    what: String,
    utc_us: Option<i64>,
    basis: String,
    local: String,
}

/// The `thinking` rows of an assistant message as FACTS.md maps the
/// reasoning nanobot stored: one per thinking block (a redacted block has no
/// text), after `reasoning_content` when it is not the blocks' texts joined.
fn expected_thinking(m: &Value) -> Vec<(String, String)> {
    let blocks = arr(m, "thinking_blocks");
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("thinking").and_then(Value::as_str))
        .collect();
    let mut v = Vec::new();
    if let Some(r) = opt(m, "reasoning_content").filter(|r| !r.is_empty())
        && (texts.is_empty() || (*r != texts.concat() && *r != texts.join("\n\n")))
    {
        v.push(("thinking".to_string(), r.to_string()));
    }
    for b in blocks {
        let text = b.get("thinking").and_then(Value::as_str).unwrap_or("");
        v.push(("thinking".to_string(), text.to_string()));
    }
    v
}

/// The rows one session message must give, as (turn_type, id or text).
fn expected_rows(m: &Value) -> Vec<(String, String)> {
    let text = opt(m, "text").unwrap_or("").to_string();
    match s(m, "role") {
        "user" if m.get("hidden").and_then(Value::as_bool) == Some(true) => {
            vec![("system".into(), text)]
        }
        "user" => vec![("user".into(), text)],
        "assistant" => {
            let calls = arr(m, "tool_calls");
            let mut v = expected_thinking(m);
            v.extend(
                calls
                    .iter()
                    .map(|c| ("tool_use".to_string(), c.as_str().unwrap_or("").to_string())),
            );
            if !text.is_empty() || v.is_empty() {
                v.push(("assistant".into(), text));
            }
            v
        }
        "tool" => vec![("tool_result".into(), s(m, "tool_call_id").to_string())],
        other => vec![("system".into(), format!("role {other}"))],
    }
}

/// Check one home against its facts; every failed check is one line of the
/// returned list.
pub fn check(name: &str, home: &Home) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let f = &home.facts;
    let mut bad: Vec<String> = Vec::new();
    let (r, all_text) = run_with_all_outputs(&home.dir, &[])?;
    let want_exit = f.get("exit_code").and_then(Value::as_i64).unwrap_or(0) as i32;
    if r.code() != Some(want_exit) {
        bad.push(format!(
            "exit {:?}, want {want_exit}: {}",
            r.code(),
            r.stderr()
        ));
    }

    // offsets: which instance-days have evidence, from which local time
    let evidence: BTreeMap<String, bool> = arr(f, "instances")
        .iter()
        .map(|i| {
            (
                s(i, "instance").to_string(),
                i.get("offset_evidence").and_then(Value::as_bool) == Some(true),
            )
        })
        .collect();
    let mut days: BTreeMap<(String, String), (i64, Option<String>)> = BTreeMap::new();
    // the days without a pair of their own (FACTS.md `evidence`)
    let mut guessed: BTreeSet<(String, String)> = BTreeSet::new();
    for o in arr(f, "offsets") {
        let key = (s(o, "instance").to_string(), s(o, "day").to_string());
        if o.get("evidence").and_then(Value::as_bool) == Some(false) {
            guessed.insert(key.clone());
        }
        days.insert(
            key,
            (
                o.get("offset_minutes").and_then(Value::as_i64).unwrap_or(0),
                opt(o, "from_local").map(|t| t.replace('T', " ")),
            ),
        );
    }
    // an instance whose every day lacks a pair of its own has no evidence
    // at all (its turns erased, or classic-CLI turns only): nanoload says
    // so (local_as_utc, NULL local times) whatever true-UTC rows it has
    let evidence: BTreeMap<String, bool> = evidence
        .into_iter()
        .map(|(instance, any)| {
            let paired = days.keys().any(|k| k.0 == instance && !guessed.contains(k));
            (instance, any && paired)
        })
        .collect();
    // the offsets a day may have: the zone's; on a day without evidence also
    // the offsets of the nearest evidence days before and after it
    let allowed = |instance: &str, day: &str, offset: i64| -> Vec<i64> {
        let mut ok = vec![offset];
        if guessed.contains(&(instance.to_string(), day.to_string())) {
            let mut evidence = days
                .iter()
                .filter(|((i, d), _)| i == instance && !guessed.contains(&(i.clone(), d.clone())));
            if let Some((_, (off, _))) = evidence.clone().rfind(|((_, d), _)| d.as_str() < day) {
                ok.push(*off);
            }
            if let Some((_, (off, _))) = evidence.find(|((_, d), _)| d.as_str() > day) {
                ok.push(*off);
            }
        }
        ok
    };

    // 1. every message SessionManager returns: in events exactly once, as primary
    let mut actual: BTreeMap<(String, i64), Vec<PrimaryRow>> = BTreeMap::new();
    for row in r.rows(
        "SELECT session_uid, seq, turn_type, coalesce(tool_use_id, text, ''), epoch_us(timestamp_utc),
                coalesce(time_basis, 'NULL'), coalesce(timestamp_local::VARCHAR, 'NULL')
         FROM events
         WHERE agent = 'nanobot' AND source_role = 'primary' AND seq IS NOT NULL
           AND source_kind IN ('nanobot.session_db', 'nanobot.session_jsonl')
           AND NOT (turn_type = 'system' AND text LIKE 'model: %')
         ORDER BY ordinal",
    )? {
        let seq: i64 = row[1].parse()?;
        actual.entry((row[0].clone(), seq)).or_default().push(PrimaryRow {
            turn_type: row[2].clone(),
            what: row[3].clone(),
            utc_us: row[4].parse().ok(),
            basis: row[5].clone(),
            local: row[6].clone(),
        });
    }
    let secrets: Vec<&str> = arr(f, "secrets").iter().filter_map(Value::as_str).collect();
    let mut expected_primary = 0usize;
    // tool ids per session: (uid, id) → (uses, results)
    let mut tool_counts: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    for sess in arr(f, "sessions") {
        let instance = s(sess, "instance");
        let uid = uid_of(instance, opt(sess, "namespace"), s(sess, "key"));
        for m in arr(sess, "messages") {
            let idx = m.get("index").and_then(Value::as_i64).unwrap_or(-1);
            // a pasted secret leaves the text as `[redacted:<rule>]`, the
            // rest of the text stays (docs/design.md "Secrets")
            let want: Vec<(String, String)> = expected_rows(m)
                .into_iter()
                .map(|(t, text)| (t, without_secrets(&text, &secrets)))
                .collect();
            expected_primary += want.len();
            for (t, id) in &want {
                let e = tool_counts.entry((uid.clone(), id.clone())).or_default();
                match t.as_str() {
                    "tool_use" => e.0 += 1,
                    "tool_result" => e.1 += 1,
                    _ => {}
                }
            }
            let got = actual.get(&(uid.clone(), idx)).cloned().unwrap_or_default();
            let got_rows: Vec<(String, String)> = got
                .iter()
                .map(|g| (g.turn_type.clone(), rule_names_dropped(&g.what)))
                .collect();
            let where_ = format!("{instance} {} #{idx}", s(sess, "key"));
            if got_rows != want {
                bad.push(format!("{where_}: rows {got_rows:?}, want {want:?}"));
                continue;
            }
            // timestamp_utc equals the harness clock's UTC instant
            let local = s(m, "timestamp").replace('T', " ");
            let day = local.get(..10).unwrap_or("").to_string();
            let has_evidence = evidence.get(instance).copied().unwrap_or(false);
            // (on a day the offset changes, the rows before the change too:
            // their instant is the old offset's)
            // A row between the day's last pair of the old offset and its
            // first of the new says its offset is uncertain
            // (time_basis local_uncertain, docs/design.md "Time"): not held
            // to its instant, but allowed only on a day the offset changes.
            for g in &got {
                match days.get(&(instance.to_string(), day.clone())) {
                    _ if !has_evidence && g.basis != "local_as_utc" => bad.push(format!(
                        "{where_}: time_basis {} on an instance without evidence",
                        g.basis
                    )),
                    _ if !has_evidence => {}
                    Some((_, Some(_))) if g.basis == "local_uncertain" => {}
                    _ if g.basis == "local_uncertain" => bad.push(format!(
                        "{where_}: time_basis local_uncertain on a day without an offset change (local {})",
                        g.local
                    )),
                    // a day without evidence of its own may take a
                    // neighbouring evidence day's offset (`allowed`)
                    Some((off, _))
                        if g.utc_us != utc_us(s(m, "utc"))
                            && !(guessed.contains(&(instance.to_string(), day.clone()))
                                && allowed(instance, &day, *off).iter().any(|o| {
                                    local_us(&local).map(|l| l - o * 60_000_000) == g.utc_us
                                })) =>
                    {
                        bad.push(format!(
                            "{where_}: timestamp_utc {:?} µs ({}, local {}), want {}",
                            g.utc_us,
                            g.basis,
                            g.local,
                            s(m, "utc")
                        ))
                    }
                    _ => {}
                }
            }
        }
    }
    let got_primary: usize = actual.values().map(Vec::len).sum();
    if got_primary != expected_primary {
        bad.push(format!(
            "{got_primary} primary session rows, want {expected_primary} (one per message part)"
        ));
    }

    // 2. secondary-only rows: exactly these, once each, as secondary; and
    //    no WebUI, run-record or CLI-history row duplicates a session message
    let mut want_secondary: Vec<Vec<String>> = Vec::new();
    for x in arr(f, "secondary_only") {
        let uid = match opt(x, "key") {
            Some(k) => uid_of(s(x, "instance"), opt(x, "namespace"), k),
            None => "NULL".into(),
        };
        let kind = s(x, "kind");
        let what = if kind.starts_with("tool") {
            s(x, "call_id").to_string()
        } else {
            s(x, "text").to_string()
        };
        if kind.starts_with("tool") {
            let e = tool_counts.entry((uid.clone(), what.clone())).or_default();
            if kind == "tool_use" {
                e.0 += 1
            } else {
                e.1 += 1
            }
        }
        want_secondary.push(vec![
            s(x, "source").to_string(),
            s(x, "instance").to_string(),
            uid,
            kind.to_string(),
            what,
        ]);
    }
    want_secondary.sort();
    let got_secondary = r.rows(
        "SELECT source_kind, instance, coalesce(session_uid, 'NULL'), turn_type,
                CASE WHEN turn_type LIKE 'tool%' THEN coalesce(tool_use_id, '') ELSE coalesce(text, '') END
         FROM events
         WHERE agent = 'nanobot' AND turn_type IN ('user', 'assistant', 'tool_use', 'tool_result')
           AND (source_kind IN ('nanobot.webui_transcript', 'nanobot.cron_run', 'nanobot.trigger_run', 'nanobot.cli_history')
                OR (source_kind = 'nanobot.session_jsonl' AND source_role = 'secondary'))
         ORDER BY ALL",
    )?;
    if got_secondary != want_secondary {
        let extra: Vec<&Vec<String>> = got_secondary
            .iter()
            .filter(|g| !want_secondary.contains(g))
            .collect();
        let missing: Vec<&Vec<String>> = want_secondary
            .iter()
            .filter(|w| !got_secondary.contains(w))
            .collect();
        bad.push(format!(
            "secondary rows differ ({} got, {} want): extra (duplicates of session messages?) {extra:?}; missing {missing:?}",
            got_secondary.len(),
            want_secondary.len()
        ));
    }
    let bad_secondary_role = r.one(
        "SELECT count(*) FROM events WHERE agent = 'nanobot' AND source_role <> 'secondary'
           AND source_kind IN ('nanobot.webui_transcript', 'nanobot.cron_run', 'nanobot.trigger_run', 'nanobot.cli_history')",
    )?;
    if bad_secondary_role != "0" {
        bad.push(format!(
            "{bad_secondary_role} copy rows not marked secondary"
        ));
    }

    // 3. each tool call id: one tool_use and one tool_result per call in its session
    let mut got_tools: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    for row in r.rows(
        "SELECT session_uid, tool_use_id, count(*) FILTER (turn_type = 'tool_use'),
                count(*) FILTER (turn_type = 'tool_result')
         FROM events WHERE agent = 'nanobot' AND tool_use_id IS NOT NULL AND session_uid IS NOT NULL
         GROUP BY ALL",
    )? {
        got_tools.insert(
            (row[0].clone(), row[1].clone()),
            (row[2].parse()?, row[3].parse()?),
        );
    }
    tool_counts.retain(|_, v| *v != (0, 0));
    if got_tools != tool_counts {
        let diff: Vec<String> = tool_counts
            .iter()
            .filter(|(k, v)| got_tools.get(*k) != Some(v))
            .map(|(k, v)| format!("{k:?}: want {v:?}, got {:?}", got_tools.get(k)))
            .chain(
                got_tools
                    .iter()
                    .filter(|(k, _)| !tool_counts.contains_key(*k))
                    .map(|(k, v)| format!("{k:?}: unexpected {v:?}")),
            )
            .collect();
        bad.push(format!("tool calls (uses, results) differ: {diff:?}"));
    }

    // 4. llm_calls: count and token sums per instance equal nanobot's
    for u in arr(f, "llm_usage") {
        let instance = s(u, "instance");
        let got = r.rows(&format!(
            "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                    coalesce(sum(total_tokens), 0), coalesce(sum(cache_read_tokens), 0),
                    coalesce(sum(cache_write_tokens), 0)
             FROM llm_calls WHERE instance = '{instance}'"
        ))?;
        let want: Vec<String> = [
            "calls",
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
        ]
        .iter()
        .map(|k| u.get(*k).and_then(Value::as_i64).unwrap_or(0).to_string())
        .collect();
        if got.first() != Some(&want) {
            bad.push(format!("llm_calls of {instance}: {got:?}, want {want:?}"));
        }
    }

    // 5. each call: the session of the turn in which the harness made it
    let attributed: BTreeMap<(String, String), String> = r
        .rows("SELECT instance, id, coalesce(session_uid, 'NULL') FROM llm_calls")?
        .into_iter()
        .map(|row| ((row[0].clone(), row[1].clone()), row[2].clone()))
        .collect();
    for c in arr(f, "llm_calls") {
        let instance = s(c, "instance");
        let id = c.get("id").map(|v| v.to_string()).unwrap_or_default();
        let want = match c.get("session").filter(|v| !v.is_null()) {
            Some(sess) => uid_of(instance, opt(sess, "namespace"), s(sess, "key")),
            None => "NULL".into(),
        };
        let got = attributed.get(&(instance.to_string(), id.clone()));
        if got != Some(&want) {
            bad.push(format!(
                "llm call {instance} #{id} ({}): session_uid {got:?}, want {want} ({})",
                c.get("started_at_ms")
                    .map(Value::to_string)
                    .unwrap_or_default(),
                c.get("session").map(Value::to_string).unwrap_or_default()
            ));
        }
    }

    // 6. offsets: every instance-day with evidence has the zone's offset
    for ((instance, day), (offset, from)) in &days {
        if evidence.get(instance) != Some(&true) {
            continue; // no local_derived rows: the instance has no evidence
        }
        let since = from
            .as_deref()
            .map(|t| format!(" AND timestamp_local >= TIMESTAMP '{t}'"))
            .unwrap_or_default();
        let got = r.rows(&format!(
            "SELECT DISTINCT utc_offset_minutes FROM events
             WHERE agent = 'nanobot' AND instance = '{instance}' AND time_basis = 'local_derived'
               AND CAST(timestamp_local AS DATE) = DATE '{day}'{since}"
        ))?;
        let ok = allowed(instance, day, *offset);
        let fits = match got.as_slice() {
            [one] => ok.iter().any(|o| one == &vec![o.to_string()]),
            // a day without evidence may have only true-UTC rows
            [] => ok.len() > 1,
            _ => false,
        };
        if !fits {
            bad.push(format!(
                "offset of {instance} on {day}{}: {got:?}, want {}",
                from.as_deref()
                    .map(|t| format!(" from {t}"))
                    .unwrap_or_default(),
                ok.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
    }

    // 6b. a row or call with only a UTC time: its local time is the zone's
    //     at its instant (docs/design.md "Time"), checked where the harness
    //     knows the day's offset and the day has no change; NULL only on an
    //     instance without evidence
    let true_offsets = |instance: &str, us: i64| -> Option<Vec<i64>> {
        days.iter()
            .filter(|((i, _), (_, from))| i == instance && from.is_none())
            .find_map(|((_, day), (off, _))| {
                let local = chrono::DateTime::from_timestamp_micros(us + off * 60_000_000)?;
                (local.date_naive().to_string() == *day).then(|| allowed(instance, day, *off))
            })
    };
    for row in r.rows(
        "SELECT 'events ' || source_kind || ' ' || coalesce(session_id, '') || ' #' || coalesce(seq::VARCHAR, ''),
                instance, epoch_us(timestamp_utc), coalesce(utc_offset_minutes::VARCHAR, 'NULL'),
                coalesce(epoch_us(timestamp_local)::VARCHAR, 'NULL')
         FROM events WHERE agent = 'nanobot' AND time_basis = 'utc'
         UNION ALL
         SELECT 'llm call ' || id, instance, epoch_us(started_at),
                coalesce(utc_offset_minutes::VARCHAR, 'NULL'),
                coalesce(epoch_us(started_at_local)::VARCHAR, 'NULL')
         FROM llm_calls",
    )? {
        let us: i64 = row[2].parse()?;
        let has_evidence = evidence.get(row[1].as_str()).copied().unwrap_or(false);
        let want = if has_evidence {
            let Some(ok) = true_offsets(&row[1], us) else {
                continue;
            };
            // the zone's offset, or on a day without evidence the one it took
            let off = row[3]
                .parse::<i64>()
                .ok()
                .filter(|o| ok.contains(o))
                .unwrap_or(ok[0]);
            (off.to_string(), (us + off * 60_000_000).to_string())
        } else {
            ("NULL".to_string(), "NULL".to_string())
        };
        if (row[3].clone(), row[4].clone()) != want {
            bad.push(format!(
                "{} of {}: utc_offset_minutes {}, local µs {}; want {} / {}",
                row[0], row[1], row[3], row[4], want.0, want.1
            ));
        }
    }

    // 7. the memory journal of every workspace inside an instance, as
    //    nanobot's MemoryStore returns it, each entry in its session
    //    (a workspace elsewhere, `--workspace ~/projects/x`, is not read:
    //    docs/design.md "Discovery"); the legacy and database-era homes
    //    state theirs as `memory_history` entries instead
    //    (legacy_history_md_gives_the_entries_nanobots_migration_gives)
    let mut want_memory: Vec<Vec<String>> = Vec::new();
    for ws in arr(f, "memory") {
        let instance = s(ws, "instance");
        if !s(ws, "workspace").contains(&format!("/{instance}/")) {
            continue;
        }
        for e in arr(ws, "history") {
            want_memory.push(vec![
                instance.to_string(),
                match opt(e, "session_key") {
                    Some(k) => uid_of(instance, opt(ws, "namespace"), k),
                    None => "NULL".into(),
                },
                format!(
                    "memory history #{}: {}",
                    e.get("cursor").map(Value::to_string).unwrap_or_default(),
                    s(e, "content")
                ),
                format!("{}:00", s(e, "timestamp")),
            ]);
        }
    }
    want_memory.sort();
    let got_memory = r.rows(
        "SELECT instance, coalesce(session_uid, 'NULL'), text, strftime(timestamp_local, '%Y-%m-%d %H:%M:%S')
         FROM events WHERE source_kind = 'nanobot.memory_history' AND text LIKE 'memory history #%'
         ORDER BY ALL",
    )?;
    if f.get("memory").is_some() && got_memory != want_memory {
        bad.push(format!(
            "memory journal rows differ: got {got_memory:?}, want {want_memory:?}"
        ));
    }

    // 8. no canary and no pairing code in any output or stderr
    for secret in arr(f, "secrets").iter().filter_map(Value::as_str) {
        if all_text.contains(secret) {
            bad.push(format!("secret {secret:?} reached an output"));
        }
    }

    // 9. every audit of sql/audits/ holds on the output tables
    if r.code() != Some(2) {
        let c = r.conn()?;
        for file in audit_files()? {
            let rows = audit_violations(&c, &std::fs::read_to_string(&file)?)?;
            if !rows.is_empty() {
                bad.push(format!(
                    "audit {}: {} violating row(s), the first: {}",
                    audit_name(&file),
                    rows.len(),
                    rows.iter().take(3).cloned().collect::<Vec<_>>().join(" | ")
                ));
            }
        }
    }
    for b in &mut bad {
        b.insert_str(0, &format!("{name}: "));
    }
    Ok(bad)
}

#[test]
fn every_committed_real_writer_home_matches_what_nanobot_reads() -> TestResult {
    let cases = committed_cases();
    assert!(
        cases.len() >= 2,
        "fixtures/realwriter holds {} homes",
        cases.len()
    );
    let mut bad = Vec::new();
    for case in &cases {
        let name = case.file_name().map(|n| n.to_string_lossy().into_owned());
        let home = Home::open(case)?;
        bad.extend(check(&name.unwrap_or_default(), &home)?);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    Ok(())
}

/// The home `.ci/run` generated from a committed seed in this run (so the
/// harness cannot rot). Outside CI the variable may be unset; with `CI=true`
/// it must be set.
#[test]
#[ignore = "tools tier (nanobot-ai): scripts/check.sh runs it (cargo test -- --ignored)"]
fn the_home_generated_in_this_run_matches_what_nanobot_reads() -> TestResult {
    let Ok(dir) = std::env::var("NANOLOAD_REALWRITER_GENERATED") else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true but NANOLOAD_REALWRITER_GENERATED is not set: .ci/run must generate a home"
        );
        eprintln!("NANOLOAD_REALWRITER_GENERATED unset: no generated home to check");
        return Ok(());
    };
    let home = Home::open(Path::new(&dir))?;
    let bad = check("generated", &home)?;
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    Ok(())
}

/// One line of `tests/realwriter/explore-expected-failures`: an explore
/// seed, the issue-24 defect letter it shows, and the start of the failed
/// check line (without the `explore-<seed>: ` prefix).
struct ExpectedFailure {
    seed: u64,
    defect: String,
    prefix: String,
}

/// `tests/realwriter/explore-expected-failures`: `seed<TAB>defect<TAB>line
/// prefix` per line; `#` comments and blank lines are skipped.
fn expected_explore_failures() -> Result<Vec<ExpectedFailure>, Box<dyn std::error::Error>> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/realwriter/explore-expected-failures");
    let mut out = Vec::new();
    for (n, line) in std::fs::read_to_string(&path)?.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(seed), Some(defect), Some(prefix)) if !prefix.is_empty() => {
                out.push(ExpectedFailure {
                    seed: seed.trim().parse()?,
                    defect: defect.trim().to_string(),
                    prefix: prefix.to_string(),
                })
            }
            _ => {
                return Err(format!(
                    "{}:{}: not `seed<TAB>defect<TAB>prefix`",
                    path.display(),
                    n + 1
                )
                .into());
            }
        }
    }
    Ok(out)
}

/// Every explore home under `NANOLOAD_REALWRITER_EXPLORE` (a directory of
/// cases, each a directory with `facts.json` written by `generate.py
/// --scenario explore`; `tests/realwriter/explore.sh` and scripts/check.sh
/// make it) checked like every real-writer home. A failed check line is
/// allowed only when `tests/realwriter/explore-expected-failures` lists its
/// seed and a prefix of it (a known defect of issue 24, not yet fixed); a
/// listed failure of a checked seed that no longer fails fails the test too,
/// so the list stays honest. A case whose generation failed (a directory
/// with `generate-failed.txt`) fails the test. Every line of every seed is
/// printed, marked `[expected <defect>]` or `[NEW]`. Unset: outside CI,
/// nothing to check; with `CI=true`, a failure.
#[test]
#[ignore = "tools tier (nanobot-ai): scripts/check.sh runs it (cargo test -- --ignored)"]
fn explored_homes_match_what_nanobot_reads() -> TestResult {
    let Ok(dir) = std::env::var("NANOLOAD_REALWRITER_EXPLORE") else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true but NANOLOAD_REALWRITER_EXPLORE is not set: scripts/check.sh must generate the explore seeds"
        );
        eprintln!("NANOLOAD_REALWRITER_EXPLORE unset: no explored homes to check");
        return Ok(());
    };
    let expected = expected_explore_failures()?;
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "{dir} holds no explored homes");
    let mut problems: Vec<String> = Vec::new();
    let mut report: Vec<String> = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let failed = case.join("generate-failed.txt");
        if failed.is_file() {
            let why = std::fs::read_to_string(&failed)?;
            let last = why
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            problems.push(format!("{name}: generation failed: {last}"));
            report.push(format!("{name}: generation failed [NEW]: {last}"));
            continue;
        }
        let home = Home::open(case)?;
        let seed = home
            .facts
            .pointer("/generator/seed")
            .and_then(Value::as_u64)
            .ok_or("facts.json without generator.seed")?;
        checked += 1;
        let lines = check(&name, &home)?;
        let mut used = vec![false; expected.len()];
        for line in &lines {
            let bare = line.strip_prefix(&format!("{name}: ")).unwrap_or(line);
            let known = expected
                .iter()
                .enumerate()
                .find(|(_, e)| e.seed == seed && bare.starts_with(&e.prefix));
            match known {
                Some((i, e)) => {
                    used[i] = true;
                    report.push(format!("{line} [expected {}]", e.defect));
                }
                None => {
                    report.push(format!("{line} [NEW]"));
                    problems.push(line.clone());
                }
            }
        }
        for (i, e) in expected.iter().enumerate() {
            if e.seed == seed && !used[i] {
                problems.push(format!(
                    "{name}: listed as failing ({}: {}) but no check failed with that prefix: remove it from explore-expected-failures",
                    e.defect, e.prefix
                ));
            }
        }
        if lines.is_empty() {
            report.push(format!("{name}: ok"));
        }
    }
    eprintln!("{}", report.join("\n"));
    eprintln!(
        "{checked} explored homes checked, {} problem(s)",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}

/// docs/design.md names the test that holds each rule: every such name
/// (`module::test` in `tests/<module>.rs`, `src/<path>::tests::test` in
/// `src/<path>.rs` or `src/<path>/mod.rs`) must be a test that exists.
#[test]
fn design_names_only_tests_that_exist() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let design = std::fs::read_to_string(root.join("docs/design.md"))?;
    let mut named = 0;
    let mut missing = Vec::new();
    for (i, piece) in design.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let Some((path, test)) = piece.rsplit_once("::") else {
            continue;
        };
        let ident =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        // `module::test` itself is the notation, not a name
        if !ident(test)
            || test == "test"
            || test.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        {
            continue;
        }
        let files: Vec<PathBuf> = if let Some((src, module)) = path.split_once("::tests::") {
            // a test in a module of a tests folder: src/steps::tests::v005_tz_offsets
            vec![root.join(format!("{src}/tests/{}.rs", module.replace("::", "/")))]
        } else if let Some(src) = path.strip_suffix("::tests") {
            vec![
                root.join(format!("{src}.rs")),
                root.join(format!("{src}/mod.rs")),
                root.join(format!("{src}/tests.rs")),
                root.join(format!("{src}/tests/mod.rs")),
            ]
        } else if ident(path) {
            vec![root.join(format!("tests/{path}.rs"))]
        } else {
            continue;
        };
        named += 1;
        let found = files
            .iter()
            .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(&format!("fn {test}("))));
        if !found {
            missing.push(piece.to_string());
        }
    }
    assert!(
        named >= 30,
        "only {named} test names found in docs/design.md"
    );
    assert!(
        missing.is_empty(),
        "docs/design.md names missing tests: {missing:?}"
    );
    Ok(())
}

/// The committed real-writer home of `name` (a directory of
/// `fixtures/realwriter/`), unpacked when it is a tarball.
fn case(name: &str) -> Result<Home, Box<dyn std::error::Error>> {
    Home::open(&fixture(&format!("realwriter/{name}")))
}

/// A dotfiles manager keeps `~/.nanobot` as a link into HOME: the instance is
/// read through the link, under the link's name, byte for byte as if it were
/// a directory; a second link to the same data (`.nanobot-old`) adds nothing
/// but a warning.
#[test]
fn a_symlinked_instance_inside_home_is_read_under_the_link_once() -> TestResult {
    let real = case("gateway")?;
    let want = run_home(&real.dir, &[])?;
    assert_eq!(want.code(), Some(0), "{}", want.stderr());

    let home = tempfile::tempdir()?;
    copy_tree(&real.dir, home.path())?;
    std::fs::create_dir(home.path().join("dotfiles"))?;
    std::fs::rename(
        home.path().join(".nanobot"),
        home.path().join("dotfiles/nanobot"),
    )?;
    std::os::unix::fs::symlink("dotfiles/nanobot", home.path().join(".nanobot"))?;
    std::os::unix::fs::symlink(".nanobot", home.path().join(".nanobot-old"))?;
    let got = run_home(home.path(), &[])?;
    assert_eq!(got.code(), Some(0), "{}", got.stderr());
    assert_eq!(
        std::fs::read(&got.out)?,
        std::fs::read(&want.out)?,
        "OUT.parquet differs from the home without links"
    );
    assert_eq!(
        got.rows("SELECT kind, source_path, message FROM diagnostics WHERE source_path LIKE '.nanobot-old%'")?,
        vec![vec![
            "warning".to_string(),
            ".nanobot-old".into(),
            format!(
                "symlink to .nanobot: its {} store file(s) are read once, under .nanobot",
                want.one("SELECT count(*) FROM sources WHERE source_path LIKE '.nanobot/%'")?
            )
        ]]
    );
    assert!(
        got.stderr()
            .contains("nanoload: warning: .nanobot-old: symlink to .nanobot"),
        "{}",
        got.stderr()
    );
    Ok(())
}

/// Data moved to another disk, `~/.nanobot` a link out of HOME: not read
/// without `--follow-links` — a `skipped_link`, a stderr line naming the
/// flag, exit code 1, never only a count — and read in full with it.
#[test]
fn a_symlinked_instance_out_of_home_is_reported_until_followed() -> TestResult {
    let real = case("gateway")?;
    let want = run_home(&real.dir, &[])?;
    let disk = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    copy_tree(&real.dir, home.path())?;
    std::fs::rename(home.path().join(".nanobot"), disk.path().join("nanobot"))?;
    let target = disk.path().join("nanobot");
    std::os::unix::fs::symlink(&target, home.path().join(".nanobot"))?;

    let skipped = run_home(home.path(), &[])?;
    assert_eq!(skipped.code(), Some(1), "{}", skipped.stderr());
    assert_eq!(
        skipped.rows(
            "SELECT kind, source_path, message FROM diagnostics WHERE kind = 'skipped_link'"
        )?,
        vec![vec![
            "skipped_link".to_string(),
            ".nanobot".into(),
            format!(
                "symlink → {} leaves HOME: not read (use --follow-links to read it)",
                target.canonicalize()?.display()
            )
        ]]
    );
    let line = format!(
        "nanoload: skipped_link: .nanobot: symlink → {} leaves HOME: not read (use --follow-links to read it)",
        target.canonicalize()?.display()
    );
    assert!(
        skipped.stderr().lines().any(|l| l == line),
        "{}",
        skipped.stderr()
    );
    assert_eq!(
        skipped.one("SELECT count(*) FROM events WHERE instance = '.nanobot'")?,
        "0"
    );

    let followed = run_home(home.path(), &["--follow-links"])?;
    assert_eq!(followed.code(), Some(0), "{}", followed.stderr());
    // the same rows; only load_id differs (--follow-links is folded into it)
    let all = "SELECT * EXCLUDE (load_id) FROM events ORDER BY ordinal, session_uid, source_path, source_line";
    assert_eq!(
        followed.rows(all)?,
        want.rows(all)?,
        "OUT.parquet differs from the home without links"
    );
    assert_ne!(
        followed.one("SELECT DISTINCT load_id FROM events")?,
        want.one("SELECT DISTINCT load_id FROM events")?
    );
    Ok(())
}

/// `--workspace` elsewhere gives the instance a second namespace; each
/// workspace's `cli:direct` is its own session (two uids, two `sessions`
/// rows, ordinals from 1 in each), as nanobot's SessionManager sees them.
#[test]
fn two_workspaces_of_one_instance_keep_two_cli_direct_sessions() -> TestResult {
    let home = case("workspaces")?;
    let mut want: Vec<Vec<String>> = arr(&home.facts, "sessions")
        .iter()
        .filter(|s| s.get("key").and_then(Value::as_str) == Some("cli:direct"))
        .map(|sess| {
            vec![
                s(sess, "instance").to_string(),
                s(sess, "namespace").to_string(),
                uid_of(s(sess, "instance"), opt(sess, "namespace"), "cli:direct"),
                arr(sess, "messages")
                    .iter()
                    .filter(|m| {
                        s(m, "role") == "user"
                            && m.get("hidden").and_then(Value::as_bool) != Some(true)
                    })
                    .count()
                    .to_string(),
            ]
        })
        .collect();
    want.sort();
    assert!(
        want.len() >= 2 && want[0][0] == want[1][0],
        "the fixture has two cli:direct sessions in one instance: {want:?}"
    );
    let r = run_home(&home.dir, &[])?;
    assert_eq!(
        r.rows("SELECT instance, namespace, session_uid, user_rows FROM sessions WHERE session_id = 'cli:direct' ORDER BY ALL")?,
        want
    );
    assert_eq!(
        r.one("SELECT count(*) FROM (SELECT session_uid FROM events WHERE session_id = 'cli:direct' GROUP BY ALL HAVING min(ordinal) = 1 AND max(ordinal) = count(*))")?,
        want.len().to_string()
    );
    Ok(())
}

/// A legacy HISTORY.md nanobot 0.3.5 never migrated (the home was written by
/// 0.1.x only) gives exactly the entries 0.3.5's own migration gives, in
/// order — stamped ones at their local time, unstamped ones (text before the
/// first stamp, a paragraph after a blank line) too, each with a warning.
#[test]
fn legacy_history_md_gives_the_entries_nanobots_migration_gives() -> TestResult {
    let home = case("legacy-history")?;
    let want: Vec<Vec<String>> = arr(&home.facts, "memory_history")
        .iter()
        .map(|e| {
            vec![
                format!("memory history (HISTORY.md): {}", s(e, "content")),
                if e.get("timestamp_from_mtime").and_then(Value::as_bool) == Some(true) {
                    "mtime".to_string()
                } else {
                    format!("{}:00", s(e, "timestamp"))
                },
            ]
        })
        .collect();
    assert_eq!(want.len(), 4, "the fixture's HISTORY.md");
    let r = run_home(&home.dir, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT text, CASE WHEN time_basis = 'utc' THEN 'mtime' ELSE strftime(timestamp_local, '%Y-%m-%d %H:%M:%S') END
             FROM events WHERE source_kind = 'nanobot.memory_history' ORDER BY source_line"
        )?,
        want
    );
    let unstamped = want.iter().filter(|w| w[1] == "mtime").count();
    assert_eq!(
        r.one("SELECT count(*) FROM diagnostics WHERE kind = 'warning' AND source_path LIKE '%/HISTORY.md' AND message LIKE 'entry without a [YYYY-MM-DD HH:MM] stamp%'")?,
        unstamped.to_string()
    );
    Ok(())
}

/// nanobot 0.3.5 renames 0.3.0's `write_stdin` tool records to
/// `exec_session` on load and saves them in place (same session, position,
/// role and timestamp); the copy left in the workspace keeps the old
/// records. Each is one message: the store of record's version is the row,
/// the copy's is dropped with its reason.
#[test]
fn a_record_nanobot_rewrote_after_a_copy_froze_is_one_message() -> TestResult {
    let home = case("legacy-upgrade")?;
    let rewritten = arr(&home.facts, "rewritten");
    assert!(!rewritten.is_empty(), "the fixture has rewritten records");
    let r = run_home(&home.dir, &[])?;
    for w in rewritten {
        let uid = uid_of(s(w, "instance"), opt(w, "namespace"), s(w, "key"));
        let index = w.get("index").and_then(Value::as_i64).unwrap_or(-1);
        let new_name = w
            .pointer("/new_record/function/name")
            .or_else(|| w.pointer("/new_record/tool_calls/0/function/name"))
            .or_else(|| w.pointer("/new_record/name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert_eq!(
            r.rows(&format!(
                "SELECT source_role, tool_name FROM events
                 WHERE session_uid = '{uid}' AND seq = {index} AND source_kind = 'nanobot.session_jsonl'
                   AND turn_type IN ('tool_use', 'tool_result')"
            ))?,
            vec![vec!["primary".to_string(), new_name.to_string()]],
            "{} #{index}",
            s(w, "key")
        );
    }
    // the summary counts the drops by reason
    let rows: usize = rewritten
        .iter()
        .map(|w| {
            w.get("copies")
                .and_then(Value::as_array)
                .map_or(1, Vec::len)
        })
        .sum();
    let line = format!(
        "    {rows:>6} same message in the primary store, rewritten there (same position, role and timestamp)"
    );
    assert!(
        r.stderr().lines().any(|l| l == line),
        "no `{line}` in {}",
        r.stderr()
    );
    Ok(())
}

/// A copy's session-metadata rows (here the relay row of the frozen Telegram
/// copy) are dropped only when a *session store* has the session: in
/// `dbera-deleted` the database deleted `telegram:555`, whose `/new`
/// summary is still in the memory journal (a primary store of another kind).
#[test]
fn a_copys_metadata_rows_stay_when_only_the_memory_journal_has_the_session() -> TestResult {
    let home = case("dbera-deleted")?;
    let r = run_home(&home.dir, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT source_kind, source_role, split_part(text, ' created_at=', 1) FROM events
             WHERE session_id = 'telegram:555' AND seq IS NULL AND source_kind = 'nanobot.session_jsonl'
             ORDER BY ordinal"
        )?,
        strs(&[
            &[
                "nanobot.session_jsonl",
                "secondary",
                "session start: key=telegram:555 channel=telegram chat=555",
            ],
            &[
                "nanobot.session_jsonl",
                "secondary",
                "session relayed: telegram chat 555 (from session key)",
            ],
        ])
    );
    assert_eq!(
        r.one("SELECT count(*) FROM events WHERE session_id = 'telegram:555' AND source_kind = 'nanobot.memory_history'")?,
        "1"
    );
    assert_eq!(
        r.one("SELECT in_primary_store FROM sessions WHERE session_id = 'telegram:555'")?,
        "false"
    );
    Ok(())
}

/// The three chats of `reasked-thinking` (nanobot's own code wrote them).
const CHAT_A: &str = "websocket:5c70c756-52ce-43d6-a753-26f212b9da7f";
const CHAT_B: &str = "websocket:e3534528-b8c5-4b6f-ac36-9116f0ae05c3";
const CHAT_C: &str = "websocket:d0ee91bb-fba4-43ba-b537-1d12fd077526";

/// A prompt asked again, word for word, twenty minutes after the turn a
/// `/new` erased (`reasked-thinking`): in chat A the `/new` was typed in the
/// WebUI (its transcript records it) and the provider's tool ids are
/// unique; in chat C another client of the WebSocket channel sent it (the
/// transcript keeps only nanobot's reply) and the local model numbers its
/// calls `call_0`, `call_1` in both turns. Either way the erased turn's user
/// row, tool rows and answer stay, once, from the transcript, its calls
/// keep their chat, and only the turn asked again is the session's — its
/// transcript copy dropped (docs/design.md "Dedup: secondary sources").
#[test]
fn a_prompt_asked_again_twenty_minutes_after_new_keeps_the_erased_turn() -> TestResult {
    let home = case("reasked-thinking")?;
    let r = run_home(&home.dir, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let chat = |id: &str| {
        r.rows(&format!(
            "SELECT source_kind, source_role, turn_type, coalesce(tool_use_id, text)
             FROM events WHERE session_id = '{id}' AND turn_type IN ('user', 'assistant', 'tool_use', 'tool_result')
             ORDER BY ordinal"
        ))
    };
    const W: &str = "nanobot.webui_transcript";
    const S: &str = "nanobot.session_jsonl";
    let backup = "Check last night's backup log and tell me whether anything failed.";
    assert_eq!(
        chat(CHAT_A)?,
        strs(&[
            &[W, "secondary", "user", backup],
            &[W, "secondary", "tool_use", "toolu_01znPXPDHMw23ARBnbzfwq1q"],
            &[
                W,
                "secondary",
                "tool_result",
                "toolu_01znPXPDHMw23ARBnbzfwq1q"
            ],
            &[W, "secondary", "tool_use", "toolu_01higN4iOpM1fw3YO7IN318A"],
            &[
                W,
                "secondary",
                "tool_result",
                "toolu_01higN4iOpM1fw3YO7IN318A"
            ],
            &[
                W,
                "secondary",
                "assistant",
                "One of last night's two backups failed: the 02:40 run stopped with *disk full*; \
                 the 02:10 run was fine. I noted it in notes/backup-check.md.",
            ],
            &[W, "secondary", "user", "/new"],
            &[W, "secondary", "assistant", "New session started."],
            &[S, "primary", "user", backup],
            &[S, "primary", "tool_use", "toolu_01HcxF4IB1Zvaxv6dVaGaOoA"],
            &[
                S,
                "primary",
                "tool_result",
                "toolu_01HcxF4IB1Zvaxv6dVaGaOoA"
            ],
            &[S, "primary", "tool_use", "toolu_01UnfYpYXU6RG3Qoj1BbdcN4"],
            &[
                S,
                "primary",
                "tool_result",
                "toolu_01UnfYpYXU6RG3Qoj1BbdcN4"
            ],
            &[
                S,
                "primary",
                "assistant",
                "The 02:40 backup failed (disk full); 02:10 was fine -- the same as in notes/backup-check.md.",
            ],
        ])
    );
    let todo = "What is still open on my list for today?";
    assert_eq!(
        chat(CHAT_C)?,
        strs(&[
            &[W, "secondary", "user", "/model local-qwen"],
            &[
                W,
                "secondary",
                "assistant",
                "Switched model preset to `local-qwen`.\n- Scope: current session\n- Model: \
                 `ollama/qwen3:14b`\n- Context window: 200000\n- Max output tokens: 8192",
            ],
            &[W, "secondary", "user", todo],
            &[W, "secondary", "tool_use", "call_0"],
            &[W, "secondary", "tool_result", "call_0"],
            &[W, "secondary", "tool_use", "call_1"],
            &[W, "secondary", "tool_result", "call_1"],
            &[
                W,
                "secondary",
                "assistant",
                "One thing is still open: renew the domain (the plumber is done).",
            ],
            // nanobot's reply to the phone's /new (the /new itself is not in
            // the transcript)
            &[W, "secondary", "assistant", "New session started."],
            &[S, "primary", "user", todo],
            &[S, "primary", "tool_use", "call_0"],
            &[S, "primary", "tool_result", "call_0"],
            &[S, "primary", "tool_use", "call_1"],
            &[S, "primary", "tool_result", "call_1"],
            &[
                S,
                "primary",
                "assistant",
                "Still open: renewing the domain."
            ],
        ])
    );
    // every call keeps the chat of its turn: the erased turns' three model
    // calls and their chat's title call too (the memory archives of /new
    // and of idle chats belong to no chat)
    let mut want: Vec<Vec<String>> = Vec::new();
    for (ids, source, session) in [
        (1..=3, "user", CHAT_A),
        (4..=4, "system", CHAT_A),
        (5..=5, "dream", "NULL"),
        (6..=8, "user", CHAT_A),
        (9..=9, "dream", "NULL"),
        (10..=11, "user", CHAT_B),
        (12..=12, "system", CHAT_B),
        (13..=13, "dream", "NULL"),
        (14..=16, "user", CHAT_C),
        (17..=17, "system", CHAT_C),
        (18..=18, "dream", "NULL"),
        (19..=21, "user", CHAT_C),
        (22..=22, "dream", "NULL"),
    ] {
        for id in ids {
            want.push(vec![id.to_string(), source.into(), session.into()]);
        }
    }
    assert_eq!(
        r.rows("SELECT id, source, coalesce(session_id, 'NULL') FROM llm_calls ORDER BY id")?,
        want
    );
    Ok(())
}

/// nanobot's Anthropic provider keeps a model's reasoning as thinking blocks
/// (text and signature) with `reasoning_content` empty; its Bedrock provider
/// keeps the blocks (one redacted) and a `reasoning_content` joining their
/// texts; an OpenAI-compatible model only `reasoning_content`
/// (`reasked-thinking`, written by nanobot's own provider code from the
/// SDKs' wire answers). Each block is one `thinking` row, its signature or
/// redacted content in `native` exactly as nanobot stored it, and never a
/// row more for the joined text; with `--include-thinking` the WebUI's copy
/// of a call's reasoning (the blocks joined) is dropped as the session's,
/// and only the erased turns' reasoning stays, from the transcript.
#[test]
fn anthropic_and_bedrock_thinking_is_one_row_per_block_as_nanobot_stored_it() -> TestResult {
    let home = case("reasked-thinking")?;
    let r = run_home(&home.dir, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let got = r.rows(
        "SELECT session_id, seq, coalesce(text, 'NULL'), coalesce(native, 'NULL') FROM events
         WHERE turn_type = 'thinking' AND source_kind = 'nanobot.session_jsonl'
         ORDER BY session_id, ordinal",
    )?;
    assert_eq!(
        got.iter().map(|g| g[..3].to_vec()).collect::<Vec<_>>(),
        strs(&[
            &[CHAT_A, "1", "Fresh session: read the backup log again."],
            &[
                CHAT_A,
                "3",
                "A note from an earlier check may exist; compare with it."
            ],
            &[CHAT_C, "1", "The list again, from the start."],
            &[CHAT_B, "3", "Disk space: ask the system, do not guess."],
            &[CHAT_B, "3", "NULL"],
            &[
                CHAT_B,
                "3",
                " One exec of printf with the numbers is enough."
            ],
            &[
                CHAT_B,
                "5",
                "97 % used explains the disk-full failure; say so."
            ],
        ])
    );
    // what nanobot stored of each message's reasoning (facts.json, from its
    // own SessionManager)
    let mut stored: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for sess in arr(&home.facts, "sessions") {
        for m in arr(sess, "messages") {
            let seq = m.get("index").map(Value::to_string).unwrap_or_default();
            stored.insert((s(sess, "key").to_string(), seq), m);
        }
    }
    let message = |key: &str, seq: &str| {
        stored
            .get(&(key.to_string(), seq.to_string()))
            .copied()
            .ok_or(format!("no message {key} #{seq} in facts.json"))
    };
    // Anthropic: the blocks, reasoning_content empty; Bedrock: the blocks'
    // texts joined; the local model: reasoning_content alone
    assert_eq!(
        message(CHAT_A, "1")?.get("reasoning_content"),
        Some(&Value::from(""))
    );
    assert_eq!(
        message(CHAT_B, "3")?.get("reasoning_content"),
        Some(&Value::from(
            "Disk space: ask the system, do not guess. One exec of printf with the numbers is enough."
        ))
    );
    assert_eq!(message(CHAT_C, "1")?.get("thinking_blocks"), None);
    // each block row's native is its block without the text, as stored:
    // the signature, and for the redacted block its type and content
    let mut natives: BTreeMap<(String, String), Vec<Value>> = BTreeMap::new();
    for g in &got {
        natives
            .entry((g[0].clone(), g[1].clone()))
            .or_default()
            .push(serde_json::from_str(&g[3]).unwrap_or(Value::Null));
    }
    for ((key, seq), native) in &natives {
        let m = message(key, seq)?;
        let want: Vec<Value> = match m.get("thinking_blocks").and_then(Value::as_array) {
            Some(blocks) => blocks
                .iter()
                .map(|b| {
                    let mut b = b.clone();
                    if let Some(o) = b.as_object_mut() {
                        o.remove("thinking");
                    }
                    b
                })
                .collect(),
            None => vec![Value::Null],
        };
        assert_eq!(native, &want, "{key} #{seq}");
    }
    let redacted = &natives[&(CHAT_B.to_string(), "3".to_string())][1];
    assert_eq!(
        redacted
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["redactedContentBase64".to_string(), "type".into()])
    );
    assert_eq!(redacted["type"], "redacted_thinking");
    assert!(
        natives
            .values()
            .flatten()
            .filter(|n| n.get("signature").is_some())
            .count()
            == 5,
        "every thinking block keeps its signature: {natives:?}"
    );

    let with = run_home(&home.dir, &["--include-thinking"])?;
    assert_eq!(with.code(), Some(0), "{}", with.stderr());
    assert_eq!(
        with.rows(
            "SELECT session_id, source_kind, source_role, coalesce(text, 'NULL') FROM events
             WHERE turn_type = 'thinking' AND source_kind = 'nanobot.webui_transcript'
             ORDER BY session_id, ordinal"
        )?,
        strs(&[
            &[
                CHAT_A,
                "nanobot.webui_transcript",
                "secondary",
                "The user wants last night's backup result. The log is the source; print it before saying anything."
            ],
            &[
                CHAT_A,
                "nanobot.webui_transcript",
                "secondary",
                "One of the two runs failed: disk full at 02:40.Note it in the workspace so the next check can compare."
            ],
            &[
                CHAT_A,
                "nanobot.webui_transcript",
                "secondary",
                "Answer briefly and name the failed run."
            ],
            &[
                CHAT_C,
                "nanobot.webui_transcript",
                "secondary",
                "Read the list first."
            ],
        ])
    );
    assert_eq!(
        with.one(
            "SELECT count(*) FROM events WHERE turn_type = 'thinking' AND source_kind = 'nanobot.session_jsonl'"
        )?,
        "7"
    );
    Ok(())
}
