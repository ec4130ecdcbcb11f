//! A [`Usage`] as a terminal table (aligned columns, a TOTAL row, notes;
//! no colour, no line wider than the width given) or as JSON.
//!
//! ```text
//! day           calls      input    output  cache read  cache write      total     cost
//! ──────────  ───────  ─────────  ────────  ──────────  ───────────  ─────────  ───────
//! 2026-03-01        3     12,345       678       4,096            0     13,023    $0.01
//! ──────────  ───────  ─────────  ────────  ──────────  ───────────  ─────────  ───────
//! TOTAL             3     12,345       678       4,096            0     13,023    $0.01
//! ```
//!
//! With `--breakdown`, each row is followed by one `└ provider/model` row
//! per model of its calls. Too wide for the width: numbers compact first
//! (`12.3K`), then the models, cache write, cache read and total drop (a
//! note names them), the key is cut to 24 characters with `…`, the
//! session's last call, the agent and its instance drop, and the key is
//! cut further.

use serde_json::{Map, Value, json};

pub use crate::readout::{dollars, thousands};

use super::{Row, Usage, View};

/// How wide a table may be (`None`: no limit, e.g. a pipe).
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub width: Option<usize>,
}

/// 1.2K, 34.5M, 1.2B (below 1 000 as it is).
fn compact(n: i64) -> String {
    let a = n.unsigned_abs() as f64;
    let (v, unit) = if a >= 1e9 {
        (a / 1e9, "B")
    } else if a >= 1e6 {
        (a / 1e6, "M")
    } else if a >= 1e3 {
        (a / 1e3, "K")
    } else {
        return thousands(n);
    };
    format!("{}{v:.1}{unit}", if n < 0 { "-" } else { "" })
}

/// A row's cost as shown: the priced sum, `+` when some calls have no
/// price (their cost is not in it), `unknown` when none has.
fn cost_cell(r: &Row) -> String {
    match &r.sums.cost_usd {
        None if r.sums.calls == 0 => "-".into(),
        None => "unknown".into(),
        Some(c) if r.sums.unpriced_calls > 0 => format!("{}+", dollars(c)),
        Some(c) => dollars(c),
    }
}

struct Column {
    head: &'static str,
    right: bool,
    /// Dropped when too wide, in this order (0: never).
    drop: u8,
    cells: Vec<String>,
}

impl Column {
    /// Its widest cell or head, in characters.
    fn width(&self) -> usize {
        self.cells
            .iter()
            .map(|s| s.chars().count())
            .chain([self.head.chars().count()])
            .max()
            .unwrap_or(0)
    }
}

/// A line of the table: a row, a model row under it (`--breakdown`), or
/// the TOTAL.
#[derive(Clone, Copy, PartialEq)]
enum Line {
    Row,
    Model,
    Total,
}

/// What the cost of `u`'s calls is of, or that there are none.
fn cost_basis(u: &Usage) -> String {
    let filtered =
        u.since.is_some() || u.until.is_some() || u.agent.is_some() || u.instance.is_some();
    u.total.sums.cost_basis(if filtered {
        "no calls in range"
    } else {
        "no LLM calls"
    })
}

/// The table of `u` within `layout`'s width.
pub fn table(u: &Usage, layout: Layout) -> String {
    let mut all: Vec<(&Row, Line)> = Vec::new();
    for r in &u.rows {
        all.push((r, Line::Row));
        all.extend(r.breakdown.iter().map(|b| (b, Line::Model)));
    }
    all.push((&u.total, Line::Total));
    let key_head = match u.view {
        View::Daily => "day",
        View::Weekly => "week from",
        View::Monthly => "month",
        View::Session => "session",
        View::Model => "model",
    };
    let titled = |r: &Row| {
        r.detail
            .iter()
            .find(|(k, _)| *k == "title")
            .and_then(|(_, v)| v.clone())
    };
    let key_of = |r: &Row| match (&r.key, u.view) {
        (Some(_), View::Session) if titled(r).is_some() => titled(r).unwrap_or_default(),
        (Some(k), _) => k.clone(),
        (None, View::Session) => "(no session)".into(),
        (None, View::Model) => "(none)".into(),
        (None, _) => "(no time)".into(),
    };
    let detail = |name: &str, r: &Row| {
        r.detail
            .iter()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let keys: Vec<String> = all
        .iter()
        .map(|(r, line)| match line {
            Line::Row => key_of(r),
            Line::Model => format!("  └ {}", r.key.clone().unwrap_or_else(|| "(none)".into())),
            Line::Total => "TOTAL".into(),
        })
        .collect();
    let any_unpriced = u.total.sums.unpriced_calls > 0;
    let build = |fmt: &dyn Fn(i64) -> String| -> Vec<Column> {
        let num = |head, drop, f: &dyn Fn(&Row) -> Option<i64>| Column {
            head,
            right: true,
            drop,
            cells: all
                .iter()
                .map(|(r, _)| f(r).map_or("-".into(), fmt))
                .collect(),
        };
        let mut cols = vec![Column {
            head: key_head,
            right: false,
            drop: 0,
            cells: keys.clone(),
        }];
        // a detail of the rows, blank on their models' rows and on TOTAL
        let text = |head, drop| Column {
            head,
            right: false,
            drop,
            cells: all
                .iter()
                .map(|(r, line)| match line {
                    Line::Row => detail(head, r),
                    _ => String::new(),
                })
                .collect(),
        };
        if u.view == View::Session {
            cols.push(text("instance", 6));
        }
        if matches!(u.view, View::Session | View::Model) {
            cols.push(text("agent", 5));
        }
        if u.view == View::Session {
            cols.push(Column {
                head: "last call",
                ..text("last", 4)
            });
        }
        cols.push(num("calls", 0, &|r| Some(r.sums.calls)));
        cols.push(num("input", 0, &|r| r.sums.input_tokens));
        cols.push(num("output", 0, &|r| r.sums.output_tokens));
        cols.push(num("cache read", 2, &|r| r.sums.cache_read_tokens));
        cols.push(num("cache write", 1, &|r| r.sums.cache_write_tokens));
        cols.push(num("total", 3, &|r| r.sums.total_tokens));
        cols.push(Column {
            head: "cost",
            right: true,
            drop: 0,
            cells: all.iter().map(|(r, _)| cost_cell(r)).collect(),
        });
        if any_unpriced {
            cols.push(num("unpriced", 0, &|r| Some(r.sums.unpriced_calls)));
        }
        if u.view != View::Model {
            cols.push(Column {
                head: "models",
                right: false,
                drop: 6,
                cells: all.iter().map(|(r, _)| r.models.join(", ")).collect(),
            });
        }
        cols
    };
    let width_of = |cols: &[Column]| -> usize {
        cols.iter().map(Column::width).sum::<usize>() + 2 * cols.len().saturating_sub(1)
    };
    let mut cols = build(&thousands);
    let mut dropped: Vec<&'static str> = Vec::new();
    let mut compacted = false;
    if let Some(w) = layout.width {
        if width_of(&cols) > w {
            cols = build(&compact);
            compacted = true;
        }
        // the token detail goes first, then the key is cut to 24
        // characters, then the session's last call, the agent and the
        // instance go, then the key is cut further
        for (level, floor) in [
            (6, None),
            (1, None),
            (2, None),
            (3, None),
            (0, Some(24)),
            (4, None),
            (5, None),
            (6, None),
            (0, Some(6)),
        ] {
            if width_of(&cols) <= w {
                break;
            }
            match floor {
                Some(floor) => {
                    let over = width_of(&cols) - w;
                    cut_key(&mut cols[0], over, floor);
                }
                None => {
                    if let Some(i) = cols.iter().position(|c| c.drop == level) {
                        dropped.push(cols[i].head);
                        cols.remove(i);
                    }
                }
            }
        }
    }
    let widths: Vec<usize> = cols.iter().map(Column::width).collect();
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, (cell, c)) in cells.iter().zip(&cols).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = widths[i].saturating_sub(cell.chars().count());
            if c.right {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else {
                s.push_str(cell);
                if i + 1 < cols.len() {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        s.trim_end().to_string()
    };
    let rule = widths
        .iter()
        .map(|w| "─".repeat(*w))
        .collect::<Vec<_>>()
        .join("  ");
    let mut out = String::new();
    let since_until = match (u.since, u.until) {
        (None, None) => String::new(),
        (s, t) => format!(
            " · {} to {}",
            s.map_or("the first call".into(), |d| d.to_string()),
            t.map_or("the last call".into(), |d| d.to_string())
        ),
    };
    let mut only = String::new();
    if let Some(a) = &u.agent {
        only.push_str(&format!(" · agent {a}"));
    }
    if let Some(i) = &u.instance {
        only.push_str(&format!(" · instance {i}"));
    }
    out.push_str(&fit(
        &format!(
            "nanoload usage · {}{} · {}{since_until}{only}",
            u.view.name(),
            if u.breakdown { " by model" } else { "" },
            u.zone
        ),
        layout.width,
    ));
    out.push_str("\n\n");
    out.push_str(&line(cols.iter().map(|c| c.head).collect()));
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    for (i, (_, kind)) in all.iter().enumerate() {
        if *kind == Line::Total {
            out.push_str(&rule);
            out.push('\n');
        }
        out.push_str(&line(cols.iter().map(|c| c.cells[i].as_str()).collect()));
        out.push('\n');
    }
    let mut notes: Vec<String> = Vec::new();
    if u.rows.is_empty() {
        notes.push("No LLM calls in this range.".into());
    }
    notes.push(
        "input counts the cached tokens (cache read, cache write); total: as the source reports it, input + output where it reports none"
            .into(),
    );
    if u.total.sums.calls == 0 {
        notes.push(format!("cost: {}", cost_basis(u)));
    } else {
        notes.push(format!("cost (USD): {}", cost_basis(u)));
    }
    if let Some(p) = &u.prices {
        notes.push(format!("cost: {p}"));
    }
    if any_unpriced {
        notes.push(
            "a call without a price is not in any sum: a cost marked + leaves some calls out, unknown: none of its calls priced (--price MODEL=IN/OUT or --free PATTERN prices them)"
                .into(),
        );
    }
    if u.utc_placed > 0 {
        notes.push(format!(
            "{} calls are placed by their UTC time: their instance has no derived offset (--timezone ZONE places every call)",
            thousands(u.utc_placed)
        ));
    }
    if u.undated > 0 && matches!(u.view, View::Daily | View::Weekly | View::Monthly) {
        notes.push(format!(
            "{} calls have no start time: row (no time)",
            thousands(u.undated)
        ));
    }
    if compacted {
        notes.push("token counts compacted to fit (K thousand, M million, B billion)".into());
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "hidden to fit {} columns: {} (--json has every column)",
            layout.width.unwrap_or(0),
            dropped.join(", ")
        ));
    }
    out.push('\n');
    for note in notes {
        out.push_str(&fit(&note, layout.width));
        out.push('\n');
    }
    out
}

/// Cut the key column's cells by `over` characters, to no fewer than
/// `floor` (nor its head's), each cut one ending in `…`.
fn cut_key(key: &mut Column, over: usize, floor: usize) {
    let kw = key
        .cells
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    let keep = kw
        .saturating_sub(over)
        .max(floor)
        .max(key.head.chars().count());
    for c in &mut key.cells {
        if c.chars().count() > keep {
            *c = c.chars().take(keep - 1).chain(['…']).collect();
        }
    }
}

/// `s` wrapped at spaces to `width` (a word longer than it is cut).
fn fit(s: &str, width: Option<usize>) -> String {
    let Some(w) = width.filter(|w| *w > 0) else {
        return s.to_string();
    };
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split(' ') {
        let word: String = if word.chars().count() > w {
            word.chars().take(w).collect()
        } else {
            word.to_string()
        };
        if cur.is_empty() {
            cur = word;
        } else if cur.chars().count() + 1 + word.chars().count() <= w {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::take(&mut cur));
            cur = word;
        }
    }
    lines.push(cur);
    lines.join("\n")
}

/// A row as JSON (`total`: the TOTAL, without a key, models or breakdown).
fn row_json(u: &Usage, r: &Row, total: bool) -> Value {
    let mut m = Map::new();
    if !total {
        m.insert(u.view.key().into(), json!(r.key));
    }
    for (k, v) in &r.detail {
        if *k != "session_id" || u.view != View::Session {
            m.insert((*k).into(), json!(v));
        }
    }
    r.sums.insert_json(&mut m, "calls");
    if !total {
        if u.view != View::Model {
            m.insert("models".into(), json!(r.models));
        }
        if u.breakdown {
            let parts: Vec<Value> = r
                .breakdown
                .iter()
                .map(|b| {
                    let mut p = Map::new();
                    p.insert("model".into(), json!(b.key));
                    b.sums.insert_json(&mut p, "calls");
                    Value::Object(p)
                })
                .collect();
            m.insert("breakdown".into(), Value::Array(parts));
        }
    }
    Value::Object(m)
}

/// `u` as one JSON document: the rows, the totals and the notes as counts.
pub fn json(u: &Usage) -> String {
    let doc = json!({
        "view": u.view.name(),
        "timezone": u.zone,
        "agent": u.agent,
        "instance": u.instance,
        "since": u.since.map(|d| d.to_string()),
        "until": u.until.map(|d| d.to_string()),
        "rows": u.rows.iter().map(|r| row_json(u, r, false)).collect::<Vec<_>>(),
        "totals": row_json(u, &u.total, true),
        "calls_placed_by_utc_time": u.utc_placed,
        "calls_without_start_time": u.undated,
        "cost_basis": cost_basis(u),
        "prices": u.prices,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
