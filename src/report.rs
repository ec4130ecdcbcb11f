//! `nanoload report OUT.parquet [--tables DIR] report.html`: one
//! self-contained HTML page over a run's output — inline CSS and inline SVG,
//! no script, no font, image or style sheet fetched — read back with the
//! embedded DuckDB.
//!
//! ```text
//! reads   OUT.parquet (events) always; with --tables DIR every DIR/<table>.parquet
//!         (sessions, llm_calls, tz_offsets, diagnostics, sources), all five
//! writes  report.html, to a temp name beside it, renamed when complete
//! ```
//!
//! Sections, each chart a `<figure data-chart=ID data-series=COLUMNS>` drawn
//! by plotters (its SVG backend; no font files, the browser sets the text)
//! with a `<table data-chart-table=ID>` beside it holding exactly the numbers
//! drawn (`data-series` names the columns drawn as bars, one bar segment per
//! non-zero value; a chart without it draws one bar per row):
//!
//! 1. **activity** (events): events per local day (`timestamp_local`),
//!    stacked by `turn_type`; events per local hour 0–23.
//! 2. **sessions** (events): the 50 sessions whose last local time is the
//!    latest, each a bar from its first to its last local time.
//! 3. **tokens and cost** (llm_calls): tokens and cost per UTC day
//!    (`started_at_ms`) and per provider and model (30 largest); a cost no
//!    price table row gives is `unknown`, never 0; the nanoclaw sessions'
//!    Claude Code cost (in `sessions`, not `llm_calls`) below.
//! 4. **tool mix** (events): `tool_use` rows per `tool_name` (40 most used).
//! 5. **duplicates and recovered rows**: per source kind, rows read
//!    (`sources.rows`), rows out (`events`, `llm_calls` for
//!    `nanobot.llm_usage`), nanoclaw `delivered` rows folded into their
//!    outbound row (`native.delivered`), and the rest: rows dropped as
//!    duplicates (equal to the run's summary); rows kept from secondary
//!    copies (`source_role = 'secondary'`: no primary store holds them).
//! 6. **time offsets**: each instance's `tz_offsets` ranges (offset, pairs
//!    of evidence, agreement); rows per instance and `time_basis` (events).
//! 7. **diagnostics**: rows per kind and code; the first 200, sorted.
//!
//! Without `--tables` the sections that need a side table say so. Same
//! input, same bytes: every query is fully ordered, costs are summed as
//! exact decimals, and the page holds no time of its own.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chrono::{NaiveDate, NaiveDateTime};
use duckdb::Connection;
use plotters::prelude::*;

use crate::atomic::Pending;
use crate::engine::{TABLES, sql_str};

/// Sessions drawn on the timeline, tools and models in their charts,
/// diagnostics listed.
pub const MAX_SESSIONS: usize = 50;
pub const MAX_TOOLS: usize = 40;
pub const MAX_MODELS: usize = 30;
pub const MAX_DIAGNOSTICS: usize = 200;

/// Why no report was written (the exit code is then 2).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input that does not read: a missing file, not an events table, a
    /// missing --tables file.
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// The page could not be written.
    #[error("{}: {message}", path.display())]
    Write { path: PathBuf, message: String },
    /// A query of the report failed.
    #[error("report query failed: {0}")]
    Query(String),
    /// A chart could not be drawn.
    #[error("chart {0}: {1}")]
    Chart(&'static str, String),
}

impl From<duckdb::Error> for ReportError {
    fn from(e: duckdb::Error) -> ReportError {
        ReportError::Query(crate::diag::one_line(&e.to_string()))
    }
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub charts: usize,
    pub bytes: usize,
}

/// The columns of `events` the report reads.
const EVENT_COLUMNS: &str = "agent, instance, session_id, session_uid, timestamp_local, \
     time_basis, turn_type, tool_name, source_kind, source_role, native, load_id";

/// Write the report of `out` (and the `--tables` directory `tables`) to
/// `html`: to a temp name beside it, renamed when complete.
pub fn report(out: &Path, tables: Option<&Path>, html: &Path) -> Result<Written, ReportError> {
    let conn = open(out, tables, html)?;
    let (page, charts) = build(&conn, tables.is_some(), out)?;
    let pending = Pending::new(html);
    pending.clean_stale();
    let write_err = |e: std::io::Error| ReportError::Write {
        path: html.to_path_buf(),
        message: e.to_string(),
    };
    if let Err(e) = std::fs::write(&pending.tmp, page.as_bytes()) {
        pending.discard();
        return Err(write_err(e));
    }
    pending.commit().map_err(|e| {
        pending.discard();
        write_err(e)
    })?;
    Ok(Written {
        charts,
        bytes: page.len(),
    })
}

/// An in-memory DuckDB with `events` and, with `tables`, each side table as
/// a view; every input checked.
fn open(out: &Path, tables: Option<&Path>, html: &Path) -> Result<Connection, ReportError> {
    let input = |path: &Path, message: String| ReportError::Input {
        path: path.to_path_buf(),
        message,
    };
    if !out.is_file() {
        return Err(input(out, "no such file (OUT.parquet of a run)".into()));
    }
    let same = |a: &Path, b: &Path| {
        a == b
            || std::fs::canonicalize(a)
                .is_ok_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b))
    };
    if same(out, html) {
        return Err(input(
            html,
            "is the input OUT.parquet; name another file".into(),
        ));
    }
    if html.is_dir() {
        return Err(input(
            html,
            "is a directory; name the HTML file to write".into(),
        ));
    }
    let conn = Connection::open_in_memory()?;
    conn.execute_batch(
        "SET autoinstall_known_extensions = false;
         SET autoload_known_extensions = false;
         SET enable_progress_bar = false;",
    )?;
    conn.execute_batch(&format!(
        "CREATE VIEW events AS SELECT * FROM read_parquet({});",
        sql_str(out)
    ))
    .and_then(|_| conn.execute_batch(&format!("SELECT {EVENT_COLUMNS} FROM events LIMIT 0")))
    .map_err(|e| {
        input(
            out,
            format!(
                "not an events table of nanoload: {}",
                crate::diag::one_line(&e.to_string())
            ),
        )
    })?;
    if let Some(dir) = tables {
        if !dir.is_dir() {
            return Err(input(
                dir,
                "no such directory (--tables DIR of a run)".into(),
            ));
        }
        for t in TABLES {
            let file = dir.join(format!("{t}.parquet"));
            if !file.is_file() {
                return Err(input(
                    &file,
                    "no such file (--tables writes all five)".into(),
                ));
            }
            if same(&file, html) {
                return Err(input(html, "is an input table; name another file".into()));
            }
            conn.execute_batch(&format!(
                "CREATE VIEW {t} AS SELECT * FROM read_parquet({});
                 SELECT * FROM {t} LIMIT 0;",
                sql_str(&file)
            ))
            .map_err(|e| input(&file, crate::diag::one_line(&e.to_string())))?;
        }
    }
    Ok(conn)
}

/// Rows of a query, every value as text (NULL as the empty string), with
/// the column names given.
struct Data {
    columns: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Data {
    fn col(&self, name: &str) -> usize {
        self.columns.iter().position(|c| *c == name).unwrap_or(0)
    }
    /// A cell as a number (0 when it is not one, e.g. `unknown`).
    fn num(&self, row: usize, col: usize) -> f64 {
        self.rows
            .get(row)
            .and_then(|r| r.get(col))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    }
}

fn fetch(conn: &Connection, columns: &[&'static str], sql: &str) -> Result<Data, ReportError> {
    let mut stmt = conn.prepare(&format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})"))?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let n = r.as_ref().column_count();
        if n != columns.len() {
            return Err(ReportError::Query(format!(
                "{n} columns where {columns:?} were expected"
            )));
        }
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(r.get::<_, Option<String>>(i)?.unwrap_or_default());
        }
        out.push(row);
    }
    Ok(Data {
        columns: columns.to_vec(),
        rows: out,
    })
}

/// One value of a one-row query.
fn scalar(conn: &Connection, sql: &str) -> Result<String, ReportError> {
    let d = fetch(conn, &["v"], sql)?;
    Ok(d.rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or_default())
}

/// Text for HTML: `&`, `<`, `>`, `"` and `'` escaped.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

// ---- charts -------------------------------------------------------------

const BG: RGBColor = RGBColor(255, 255, 255);
const INK: RGBColor = RGBColor(68, 68, 68);
const BLUE_: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const ORANGE: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
const GREEN_: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
const RED_: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const PURPLE: RGBColor = RGBColor(0x94, 0x67, 0xbd);
const BROWN: RGBColor = RGBColor(0x8c, 0x56, 0x4b);
const GREY: RGBColor = RGBColor(0x7f, 0x7f, 0x7f);
const TEAL: RGBColor = RGBColor(0x17, 0xbe, 0xcf);

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

const FONT: &str = "sans-serif";
const WIDTH: u32 = 720;

/// A number on an axis: short (1.2k, 3.4M), at most 4 decimals.
fn axis_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" { "0".into() } else { s.into() }
    }
}

/// A label cut to `n` characters (the table beside holds it whole).
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn epoch_day(d: &str) -> Option<i64> {
    let d = NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()?;
    let e = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    Some((d - e).num_days())
}

fn day_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|e| e.checked_add_signed(chrono::Duration::days(x.round() as i64)))
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn epoch_seconds(t: &str) -> Option<f64> {
    let t = NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S").ok()?;
    Some(t.and_utc().timestamp() as f64)
}

/// The label of an integer position in `labels`, "" between them.
fn index_label(labels: &[String], y: f64) -> String {
    if (y - y.round()).abs() > 1e-6 || y < -0.5 {
        return String::new();
    }
    labels.get(y.round() as usize).cloned().unwrap_or_default()
}

type Stack = Vec<(f64, RGBColor)>;

/// Where bars of a vertical chart stand on the x axis.
enum XAxis<'a> {
    /// Days since 1970-01-01, labelled as dates.
    Days,
    /// Positions 0, 1, … labelled with these texts.
    Labels(&'a [String]),
}

/// A plotters error of chart `id`, as the report's error.
fn chart_err<E: std::fmt::Display>(id: &'static str) -> impl Fn(E) -> ReportError {
    move |e| ReportError::Chart(id, e.to_string())
}

/// Vertical stacked bars, one stack per x position; each segment a rect.
fn vbars(
    id: &'static str,
    xs: &[f64],
    axis: XAxis,
    stacks: &[Stack],
    y_desc: &str,
) -> Result<String, ReportError> {
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
    let (x0, x1) = if xs.is_empty() {
        (-0.5, 0.5)
    } else {
        (lo - 0.6, hi + 0.6)
    };
    let top = stacks
        .iter()
        .map(|s| s.iter().map(|(v, _)| v).sum::<f64>())
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.08 } else { 1.0 };
    let n_labels = match axis {
        XAxis::Days => 8,
        XAxis::Labels(l) => l.len().clamp(1, 24),
    };
    let fmt = |x: &f64| match axis {
        XAxis::Days => day_label(*x),
        XAxis::Labels(l) => index_label(l, *x),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 300)).into_drawing_area();
        root.fill(&BG).map_err(chart_err(id))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0f64..top)
            .map_err(chart_err(id))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n_labels)
            .y_labels(6)
            .x_label_formatter(&fmt)
            .y_label_formatter(&|y| axis_num(*y))
            .y_desc(y_desc)
            .label_style((FONT, 13).into_font().color(&INK))
            .axis_desc_style((FONT, 14).into_font().color(&INK))
            .draw()
            .map_err(chart_err(id))?;
        let rects = xs.iter().zip(stacks).flat_map(|(x, stack)| {
            let mut acc = 0.0;
            stack
                .iter()
                .filter(|(v, _)| *v > 0.0)
                .map(|(v, c)| {
                    let r = Rectangle::new([(x - 0.4, acc), (x + 0.4, acc + v)], c.filled());
                    acc += v;
                    r
                })
                .collect::<Vec<_>>()
        });
        chart.draw_series(rects).map_err(chart_err(id))?;
        root.present().map_err(chart_err(id))?;
    }
    Ok(svg)
}

/// Horizontal stacked bars, one per label, the first on top.
fn hbars(
    id: &'static str,
    labels: &[String],
    stacks: &[Stack],
    x_desc: &str,
) -> Result<String, ReportError> {
    let n = labels.len();
    let shown: Vec<String> = labels.iter().map(|l| cut(l, 44)).collect();
    // the first row on top: row i at y = n - 1 - i
    let by_y: Vec<String> = shown.iter().rev().cloned().collect();
    let right = stacks
        .iter()
        .map(|s| s.iter().map(|(v, _)| v).sum::<f64>())
        .fold(0.0, f64::max);
    let right = if right > 0.0 { right * 1.08 } else { 1.0 };
    let label_px = shown.iter().map(|l| l.chars().count()).max().unwrap_or(4) as u32 * 7 + 16;
    let height = 70 + 20 * n.max(1) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&BG).map_err(chart_err(id))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_px.min(340))
            .build_cartesian_2d(0f64..right, -0.5f64..(n.max(1) as f64 - 0.5))
            .map_err(chart_err(id))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n.max(1))
            .x_labels(6)
            .y_label_formatter(&|y| index_label(&by_y, *y))
            .x_label_formatter(&|x| axis_num(*x))
            .x_desc(x_desc)
            .label_style((FONT, 13).into_font().color(&INK))
            .axis_desc_style((FONT, 14).into_font().color(&INK))
            .draw()
            .map_err(chart_err(id))?;
        let rects = stacks.iter().enumerate().flat_map(|(i, stack)| {
            let y = (n - 1 - i) as f64;
            let mut acc = 0.0;
            stack
                .iter()
                .filter(|(v, _)| *v > 0.0)
                .map(|(v, c)| {
                    let r = Rectangle::new([(acc, y - 0.35), (acc + v, y + 0.35)], c.filled());
                    acc += v;
                    r
                })
                .collect::<Vec<_>>()
        });
        chart.draw_series(rects).map_err(chart_err(id))?;
        root.present().map_err(chart_err(id))?;
    }
    Ok(svg)
}

/// One bar of a range chart: its row (a label index), its start and end on
/// the x axis, colour and a text drawn beside it.
struct Span {
    row: usize,
    start: f64,
    end: f64,
    color: RGBColor,
    text: String,
}

/// Bars from start to end on rows of labels (the first on top); x as
/// seconds (`days` false: labelled as dates or times) or days.
fn ranges(
    id: &'static str,
    labels: &[String],
    spans: &[Span],
    days: bool,
) -> Result<String, ReportError> {
    let n = labels.len().max(1);
    let shown: Vec<String> = labels.iter().map(|l| cut(l, 44)).collect();
    let by_y: Vec<String> = shown.iter().rev().cloned().collect();
    let (lo, hi) = spans.iter().fold((f64::MAX, f64::MIN), |(a, b), s| {
        (a.min(s.start), b.max(s.end))
    });
    let (lo, hi) = if spans.is_empty() {
        (0.0, 1.0)
    } else {
        (lo, hi)
    };
    let unit = if days { 1.0 } else { 60.0 };
    let pad = ((hi - lo) * 0.03).max(unit);
    let (x0, x1) = (lo - pad, hi + pad * 4.0);
    // a bar is at least 0.4% of the axis wide: a one-message session shows
    let min_w = (x1 - x0) * 0.004;
    let span_days = (x1 - x0) / if days { 1.0 } else { 86_400.0 };
    let fmt = |x: &f64| {
        if days {
            day_label(x.round())
        } else {
            chrono::DateTime::from_timestamp(*x as i64, 0)
                .map(|t| {
                    let f = if span_days > 3.0 {
                        "%Y-%m-%d"
                    } else {
                        "%m-%d %H:%M"
                    };
                    t.naive_utc().format(f).to_string()
                })
                .unwrap_or_default()
        }
    };
    let label_px = shown.iter().map(|l| l.chars().count()).max().unwrap_or(4) as u32 * 7 + 16;
    let height = 70 + 20 * n as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH + 180, height)).into_drawing_area();
        root.fill(&BG).map_err(chart_err(id))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_px.min(340))
            .build_cartesian_2d(x0..x1, -0.5f64..(n as f64 - 0.5))
            .map_err(chart_err(id))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .x_labels(6)
            .y_label_formatter(&|y| index_label(&by_y, *y))
            .x_label_formatter(&fmt)
            .x_desc(if days { "local day" } else { "local time" })
            .label_style((FONT, 13).into_font().color(&INK))
            .axis_desc_style((FONT, 14).into_font().color(&INK))
            .draw()
            .map_err(chart_err(id))?;
        chart
            .draw_series(spans.iter().map(|s| {
                let y = (n - 1 - s.row) as f64;
                let end = s.end.max(s.start + min_w);
                Rectangle::new([(s.start, y - 0.35), (end, y + 0.35)], s.color.filled())
            }))
            .map_err(chart_err(id))?;
        chart
            .draw_series(spans.iter().filter(|s| !s.text.is_empty()).map(|s| {
                let y = (n - 1 - s.row) as f64;
                let end = s.end.max(s.start + min_w);
                Text::new(
                    s.text.clone(),
                    (end + min_w, y + 0.3),
                    (FONT, 12).into_font().color(&INK),
                )
            }))
            .map_err(chart_err(id))?;
        root.present().map_err(chart_err(id))?;
    }
    Ok(svg)
}

// ---- the page -------------------------------------------------------------

/// One chart: its numbers, the columns drawn as bars and the SVG.
struct Chart {
    id: &'static str,
    title: String,
    data: Data,
    /// Columns drawn as bar segments, with their colours; empty for a range
    /// chart (one bar per row).
    series: Vec<(&'static str, RGBColor)>,
    svg: String,
}

struct Page {
    html: String,
    charts: usize,
    in_section: bool,
}

impl Page {
    fn section(&mut self, id: &str, title: &str, intro: &str) {
        if self.in_section {
            self.html.push_str("</section>\n");
        }
        self.in_section = true;
        let _ = writeln!(
            self.html,
            "<section id=\"{id}\">\n<h2>{}</h2>\n<p class=\"intro\">{intro}</p>",
            esc(title)
        );
    }

    fn note(&mut self, html: &str) {
        let _ = writeln!(self.html, "<p class=\"note\">{html}</p>");
    }

    fn missing(&mut self, table: &str, what: &str) {
        let _ = writeln!(
            self.html,
            "<p class=\"missing\" data-missing=\"{table}\">{} needs the side table <code>{table}</code>: \
             run <code>nanoload report OUT.parquet --tables DIR report.html</code> with the \
             <code>--tables DIR</code> the load wrote.</p>",
            esc(what)
        );
    }

    fn chart(&mut self, c: Chart) {
        self.charts += 1;
        let series: Vec<&str> = c.series.iter().map(|(s, _)| *s).collect();
        let _ = write!(self.html, "<figure data-chart=\"{}\"", c.id);
        if !series.is_empty() {
            let _ = write!(self.html, " data-series=\"{}\"", series.join(","));
        }
        let _ = write!(
            self.html,
            ">\n<figcaption>{} <span class=\"rows\">({} rows)</span>",
            esc(&c.title),
            c.data.rows.len()
        );
        if c.series.len() > 1 {
            for (s, color) in &c.series {
                let _ = write!(
                    self.html,
                    " <span class=\"key\"><span class=\"sw\" style=\"background:{}\"></span>{}</span>",
                    hex(*color),
                    esc(s)
                );
            }
        }
        self.html.push_str("</figcaption>\n");
        if c.data.rows.is_empty() {
            self.html.push_str("<p class=\"empty\">no rows</p>\n");
        } else {
            let _ = writeln!(self.html, "<div class=\"svg\">{}</div>", c.svg.trim_end());
        }
        let _ = writeln!(
            self.html,
            "<div class=\"tbl\"><table data-chart-table=\"{}\">",
            c.id
        );
        table_body(&mut self.html, &c.data);
        self.html.push_str("</table></div>\n</figure>\n");
    }

    fn list(&mut self, id: &str, data: &Data) {
        let _ = writeln!(
            self.html,
            "<div class=\"tbl list\"><table data-list=\"{id}\">"
        );
        table_body(&mut self.html, data);
        self.html.push_str("</table></div>\n");
    }
}

fn table_body(html: &mut String, data: &Data) {
    html.push_str("<thead><tr>");
    for c in &data.columns {
        let _ = write!(html, "<th>{}</th>", esc(c));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for r in &data.rows {
        html.push_str("<tr>");
        for v in r {
            let _ = write!(html, "<td>{}</td>", esc(v));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n");
}

/// The stacks of `data`: per row, each series column's value and colour.
fn stacks(data: &Data, series: &[(&'static str, RGBColor)]) -> Vec<Stack> {
    let cols: Vec<(usize, RGBColor)> = series.iter().map(|(s, c)| (data.col(s), *c)).collect();
    (0..data.rows.len())
        .map(|i| {
            cols.iter()
                .map(|(c, color)| (data.num(i, *c), *color))
                .collect()
        })
        .collect()
}

const STYLE: &str = "
body{font-family:'DejaVu Sans',sans-serif;color:#222;background:#fff;margin:0 auto;padding:8px 24px 40px;max-width:1240px}
h1{font-size:24px;margin:16px 0 4px}h2{font-size:19px;margin:0 0 4px;border-bottom:2px solid #1f77b4;padding-bottom:3px}
section{margin:28px 0}p{margin:6px 0;font-size:14px}.intro{color:#444}.note{color:#555;font-size:13px}
.missing{background:#fff4e0;border-left:4px solid #ff7f0e;padding:6px 10px}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:14px;margin:8px 0}
dl.facts dt{color:#555}dl.facts dd{margin:0;font-weight:bold}
figure{display:flex;flex-wrap:wrap;gap:12px 18px;align-items:flex-start;margin:14px 0;padding:8px;border:1px solid #e4e4e4;border-radius:4px}
figcaption{flex:1 0 100%;font-weight:bold;font-size:15px}.rows{font-weight:normal;color:#777;font-size:13px}
.key{font-weight:normal;font-size:13px;margin-left:10px;white-space:nowrap}
.sw{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
.svg svg{display:block;max-width:100%;height:auto}
.tbl{max-height:300px;overflow:auto;border:1px solid #ddd;flex:1 1 260px}
.list{max-height:360px}
table{border-collapse:collapse;font-size:12px;width:100%}
th{position:sticky;top:0;background:#f3f3f3;text-align:left;padding:3px 6px}
td{padding:2px 6px;border-top:1px solid #eee;white-space:nowrap}
.empty{color:#777;font-style:italic}
code{font-size:13px;background:#f4f4f4;padding:0 3px}
";

/// The page and its number of charts.
fn build(conn: &Connection, have_tables: bool, out: &Path) -> Result<(String, usize), ReportError> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut p = Page {
        html: String::new(),
        charts: 0,
        in_section: false,
    };
    let _ = write!(
        p.html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>nanoload report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&name)
    );
    facts(conn, &mut p, &name, have_tables)?;
    activity(conn, &mut p)?;
    sessions(conn, &mut p)?;
    tokens(conn, &mut p, have_tables)?;
    tools(conn, &mut p)?;
    duplicates(conn, &mut p, have_tables)?;
    offsets(conn, &mut p, have_tables)?;
    diagnostics(conn, &mut p, have_tables)?;
    p.html.push_str("</section>\n</body>\n</html>\n");
    Ok((p.html, p.charts))
}

const TS: &str = "'%Y-%m-%d %H:%M:%S'";

fn facts(
    conn: &Connection,
    p: &mut Page,
    name: &str,
    have_tables: bool,
) -> Result<(), ReportError> {
    let d = fetch(
        conn,
        &[
            "events",
            "sessions",
            "instances",
            "agents",
            "load_id",
            "first_local",
            "last_local",
            "without_time",
        ],
        &format!(
            "SELECT count(*), count(DISTINCT session_uid), count(DISTINCT instance),
                    array_to_string(list_sort(list(DISTINCT agent)), ', '),
                    array_to_string(list_sort(list(DISTINCT load_id)), ', '),
                    coalesce(strftime(min(timestamp_local), {TS}), ''),
                    coalesce(strftime(max(timestamp_local), {TS}), ''),
                    count(*) FILTER (WHERE timestamp_local IS NULL)
             FROM events"
        ),
    )?;
    let _ = writeln!(p.html, "<h1>nanoload report: {}</h1>", esc(name));
    p.html.push_str(
        "<p class=\"intro\">What one load of nanobot and nanoclaw state holds. Every chart is \
         drawn from the table beside it; times are local (<code>timestamp_local</code>) unless \
         said otherwise.</p>\n<dl class=\"facts\" data-facts=\"events\">\n",
    );
    if let Some(r) = d.rows.first() {
        let labels = [
            "events",
            "sessions",
            "instances",
            "agents",
            "load_id",
            "first event (local)",
            "last event (local)",
            "events without a time",
        ];
        for (i, (l, v)) in labels.iter().zip(r).enumerate() {
            let _ = writeln!(
                p.html,
                "<dt>{l}</dt><dd data-fact=\"{}\">{}</dd>",
                d.columns[i],
                esc(v)
            );
        }
    }
    let _ = writeln!(
        p.html,
        "<dt>side tables</dt><dd data-fact=\"tables\">{}</dd>\n</dl>",
        if have_tables {
            "read (--tables)"
        } else {
            "not given: the sections that need them say so"
        }
    );
    Ok(())
}

fn activity(conn: &Connection, p: &mut Page) -> Result<(), ReportError> {
    p.section(
        "activity",
        "Activity",
        "Events per local day, by row type, and per local hour of the day (all days together). \
         Rows without a time are left out (see above).",
    );
    let types: [(&'static str, RGBColor); 6] = [
        ("user", BLUE_),
        ("assistant", GREEN_),
        ("tool_use", ORANGE),
        ("tool_result", BROWN),
        ("thinking", PURPLE),
        ("system", GREY),
    ];
    let mut cols = vec!["day", "events"];
    cols.extend(types.iter().map(|(t, _)| *t));
    let filters: Vec<String> = types
        .iter()
        .map(|(t, _)| format!("count(*) FILTER (WHERE turn_type = '{t}')"))
        .collect();
    let days = fetch(
        conn,
        &cols,
        &format!(
            "SELECT strftime(timestamp_local, '%Y-%m-%d') AS day, count(*), {}
             FROM events WHERE timestamp_local IS NOT NULL GROUP BY day ORDER BY day",
            filters.join(", ")
        ),
    )?;
    let xs: Vec<f64> = days
        .rows
        .iter()
        .map(|r| epoch_day(&r[0]).unwrap_or(0) as f64)
        .collect();
    let series = types.to_vec();
    let svg = vbars(
        "activity-day",
        &xs,
        XAxis::Days,
        &stacks(&days, &series),
        "events",
    )?;
    p.chart(Chart {
        id: "activity-day",
        title: "Events per local day".into(),
        data: days,
        series,
        svg,
    });
    let hours = fetch(
        conn,
        &["hour", "events"],
        "SELECT h.hour, count(e.timestamp_local)
         FROM range(24) AS h(hour) LEFT JOIN events e ON hour(e.timestamp_local) = h.hour
         GROUP BY h.hour ORDER BY h.hour",
    )?;
    let labels: Vec<String> = (0..24).map(|h| format!("{h:02}")).collect();
    let xs: Vec<f64> = (0..hours.rows.len()).map(|h| h as f64).collect();
    let series = vec![("events", BLUE_)];
    let svg = vbars(
        "activity-hour",
        &xs,
        XAxis::Labels(&labels),
        &stacks(&hours, &series),
        "events",
    )?;
    p.chart(Chart {
        id: "activity-hour",
        title: "Events per local hour of the day".into(),
        data: hours,
        series,
        svg,
    });
    Ok(())
}

fn sessions(conn: &Connection, p: &mut Page) -> Result<(), ReportError> {
    p.section(
        "sessions",
        "Sessions",
        "Each session (one <code>session_uid</code>) as a bar from its first to its last local \
         time; its events counted beside.",
    );
    let counts = fetch(
        conn,
        &["sessions", "timed"],
        "SELECT count(*), count(*) FILTER (WHERE t) FROM (
           SELECT session_uid, bool_or(timestamp_local IS NOT NULL) AS t
           FROM events WHERE session_uid IS NOT NULL GROUP BY session_uid)",
    )?;
    let (all, timed) = counts
        .rows
        .first()
        .map(|r| (r[0].clone(), r[1].clone()))
        .unwrap_or_default();
    let data = fetch(
        conn,
        &[
            "session_uid",
            "agent",
            "instance",
            "session_id",
            "first_local",
            "last_local",
            "events",
        ],
        &format!(
            "WITH s AS (
               SELECT session_uid, agent, instance, session_id, min(timestamp_local) AS first,
                      max(timestamp_local) AS last, count(*) AS events
               FROM events WHERE session_uid IS NOT NULL
               GROUP BY session_uid, agent, instance, session_id),
             recent AS (
               SELECT * FROM s WHERE last IS NOT NULL
               ORDER BY last DESC, session_uid LIMIT {MAX_SESSIONS})
             SELECT session_uid, agent, instance, coalesce(session_id, ''), strftime(first, {TS}),
                    strftime(last, {TS}), events
             FROM recent ORDER BY first, last, session_uid"
        ),
    )?;
    p.note(&format!(
        "{} sessions, {} with a time; the {} most recent by last local time are drawn \
         (at most {MAX_SESSIONS}).",
        esc(&all),
        esc(&timed),
        data.rows.len()
    ));
    let labels: Vec<String> = data
        .rows
        .iter()
        .map(|r| format!("{} · {}", r[3], r[2]))
        .collect();
    let spans: Vec<Span> = data
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| Span {
            row: i,
            start: epoch_seconds(&r[4]).unwrap_or(0.0),
            end: epoch_seconds(&r[5]).unwrap_or(0.0),
            color: if r[1] == "nanoclaw" { ORANGE } else { BLUE_ },
            text: r[6].clone(),
        })
        .collect();
    let svg = ranges("sessions-timeline", &labels, &spans, false)?;
    p.chart(Chart {
        id: "sessions-timeline",
        title:
            "Sessions from first to last local time (nanobot blue, nanoclaw orange; events beside)"
                .into(),
        data,
        series: Vec::new(),
        svg,
    });
    Ok(())
}

/// Cost as text: exact decimal sums, 6 decimals; `unknown` when no row of
/// the group has a price.
const COST: &str = "coalesce(CAST(round(sum(cost_usd::DECIMAL(38, 12)), 6) AS DECIMAL(38, 6))::VARCHAR, 'unknown')";

fn tokens(conn: &Connection, p: &mut Page, have_tables: bool) -> Result<(), ReportError> {
    p.section(
        "tokens",
        "Tokens and cost",
        "nanobot's LLM calls (<code>llm_calls</code>) per UTC day of <code>started_at</code> and \
         per provider and model. nanobot's input tokens include the cached ones. Cost is the sum \
         of the priced calls (USD); a model the price table does not know costs \
         <code>unknown</code>, never 0, and its calls are counted as unpriced.",
    );
    if !have_tables {
        p.missing("llm_calls", "Tokens and cost");
        return Ok(());
    }
    let tok_series = vec![("input_tokens", BLUE_), ("output_tokens", ORANGE)];
    let sums = "count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0)";
    let tok_cols = [
        "calls",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    ];
    let mut cols = vec!["day"];
    cols.extend(tok_cols);
    let days = fetch(
        conn,
        &cols,
        &format!(
            "SELECT strftime(epoch_ms(started_at_ms), '%Y-%m-%d') AS day, {sums}
             FROM llm_calls WHERE started_at_ms IS NOT NULL GROUP BY day ORDER BY day"
        ),
    )?;
    let xs: Vec<f64> = days
        .rows
        .iter()
        .map(|r| epoch_day(&r[0]).unwrap_or(0) as f64)
        .collect();
    let svg = vbars(
        "tokens-day",
        &xs,
        XAxis::Days,
        &stacks(&days, &tok_series),
        "tokens",
    )?;
    p.chart(Chart {
        id: "tokens-day",
        title: "Tokens per UTC day".into(),
        data: days,
        series: tok_series.clone(),
        svg,
    });
    let cost_days = fetch(
        conn,
        &["day", "cost_usd", "unpriced_calls"],
        &format!(
            "SELECT strftime(epoch_ms(started_at_ms), '%Y-%m-%d') AS day, {COST},
                    count(*) FILTER (WHERE cost_usd IS NULL)
             FROM llm_calls WHERE started_at_ms IS NOT NULL GROUP BY day ORDER BY day"
        ),
    )?;
    let xs: Vec<f64> = cost_days
        .rows
        .iter()
        .map(|r| epoch_day(&r[0]).unwrap_or(0) as f64)
        .collect();
    let series = vec![("cost_usd", GREEN_)];
    let svg = vbars(
        "cost-day",
        &xs,
        XAxis::Days,
        &stacks(&cost_days, &series),
        "USD",
    )?;
    p.chart(Chart {
        id: "cost-day",
        title: "Cost per UTC day (USD, priced calls)".into(),
        data: cost_days,
        series,
        svg,
    });
    let undated = scalar(
        conn,
        "SELECT count(*) FROM llm_calls WHERE started_at_ms IS NULL",
    )?;
    if undated != "0" {
        p.note(&format!(
            "{} calls have no start time and no day.",
            esc(&undated)
        ));
    }

    let models = scalar(
        conn,
        "SELECT count(*) FROM (SELECT DISTINCT provider, model FROM llm_calls)",
    )?;
    let mut cols = vec!["provider", "model"];
    cols.extend(tok_cols);
    let by_model = fetch(
        conn,
        &cols,
        &format!(
            "SELECT coalesce(provider, '(none)') AS p, coalesce(model, '(none)') AS m, {sums}
             FROM llm_calls GROUP BY p, m
             ORDER BY coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) DESC, p, m
             LIMIT {MAX_MODELS}"
        ),
    )?;
    let labels: Vec<String> = by_model
        .rows
        .iter()
        .map(|r| format!("{} · {}", r[1], r[0]))
        .collect();
    let svg = hbars(
        "tokens-model",
        &labels,
        &stacks(&by_model, &tok_series),
        "tokens",
    )?;
    p.note(&format!(
        "Provider and model pairs: {}; at most {MAX_MODELS} are drawn, the most tokens first.",
        esc(&models)
    ));
    p.chart(Chart {
        id: "tokens-model",
        title: "Tokens per model".into(),
        data: by_model,
        series: tok_series,
        svg,
    });
    let cost_model = fetch(
        conn,
        &["provider", "model", "cost_usd", "unpriced_calls"],
        &format!(
            "SELECT coalesce(provider, '(none)') AS p, coalesce(model, '(none)') AS m, {COST},
                    count(*) FILTER (WHERE cost_usd IS NULL)
             FROM llm_calls GROUP BY p, m
             ORDER BY sum(cost_usd::DECIMAL(38, 12)) DESC NULLS LAST, p, m
             LIMIT {MAX_MODELS}"
        ),
    )?;
    let labels: Vec<String> = cost_model
        .rows
        .iter()
        .map(|r| format!("{} · {}", r[1], r[0]))
        .collect();
    let series = vec![("cost_usd", GREEN_)];
    let svg = hbars("cost-model", &labels, &stacks(&cost_model, &series), "USD")?;
    p.chart(Chart {
        id: "cost-model",
        title: "Cost per model (USD; unknown: no price)".into(),
        data: cost_model,
        series,
        svg,
    });
    let nc = fetch(
        conn,
        &["sessions", "priced", "cost_usd"],
        &format!("SELECT count(*), count(cost_usd), {COST} FROM sessions WHERE agent = 'nanoclaw'"),
    )?;
    if let Some(r) = nc.rows.first().filter(|r| r[0] != "0") {
        p.note(&format!(
            "nanoclaw: Claude Code usage is not in <code>llm_calls</code>; <code>sessions.cost_usd</code> \
             prices it: {} nanoclaw sessions, {} with a cost, together <span data-fact=\"nanoclaw_cost_usd\">{}</span> USD.",
            esc(&r[0]),
            esc(&r[1]),
            esc(&r[2])
        ));
    }
    Ok(())
}

fn tools(conn: &Connection, p: &mut Page) -> Result<(), ReportError> {
    p.section(
        "tools",
        "Tool mix",
        "Tool calls (<code>tool_use</code> rows) per tool name, and in how many sessions each \
         was called.",
    );
    let all = scalar(
        conn,
        "SELECT count(DISTINCT coalesce(tool_name, '(none)')) FROM events WHERE turn_type = 'tool_use'",
    )?;
    let data = fetch(
        conn,
        &["tool", "calls", "sessions"],
        &format!(
            "SELECT coalesce(tool_name, '(none)') AS tool, count(*) AS calls, count(DISTINCT session_uid)
             FROM events WHERE turn_type = 'tool_use'
             GROUP BY tool ORDER BY calls DESC, tool LIMIT {MAX_TOOLS}"
        ),
    )?;
    p.note(&format!(
        "Tools called: {}; at most {MAX_TOOLS} are drawn, the most called first.",
        esc(&all)
    ));
    let labels: Vec<String> = data.rows.iter().map(|r| r[0].clone()).collect();
    let series = vec![("calls", ORANGE)];
    let svg = hbars("tools", &labels, &stacks(&data, &series), "tool calls")?;
    p.chart(Chart {
        id: "tools",
        title: "Tool calls per tool".into(),
        data,
        series,
        svg,
    });
    Ok(())
}

fn duplicates(conn: &Connection, p: &mut Page, have_tables: bool) -> Result<(), ReportError> {
    p.section(
        "copies",
        "Duplicates dropped and rows recovered",
        "Per source kind: the rows its stores held (<code>sources.rows</code>), the rows in the \
         output (<code>events</code>; <code>llm_calls</code> for <code>nanobot.llm_usage</code>), \
         nanoclaw <code>delivered</code> rows folded into their outbound row \
         (<code>native.delivered</code>), and the rest: rows dropped as copies of a row the \
         output keeps. The reasons are in the load's summary (<code>--summary-json</code> \
         <code>drop_reasons</code>).",
    );
    if have_tables {
        let data = fetch(
            conn,
            &[
                "source_kind",
                "stores",
                "rows_read",
                "rows_out",
                "folded",
                "duplicates",
            ],
            "WITH r AS (
               SELECT source_kind, count(*) AS stores, coalesce(sum(rows), 0) AS rows_read
               FROM sources GROUP BY source_kind),
             o AS (
               SELECT source_kind, count(*) AS n FROM events GROUP BY source_kind
               UNION ALL SELECT 'nanobot.llm_usage', count(*) FROM llm_calls),
             f AS (
               SELECT count(*) AS n FROM events
               WHERE source_kind = 'nanoclaw.outbound'
                 AND json_extract(native, '$.delivered') IS NOT NULL)
             SELECT r.source_kind, r.stores, r.rows_read, coalesce(o.n, 0) AS rows_out,
                    CASE WHEN r.source_kind = 'nanoclaw.inbound' THEN f.n ELSE 0 END AS folded,
                    r.rows_read - rows_out - folded
             FROM r LEFT JOIN o USING (source_kind) CROSS JOIN f
             ORDER BY r.source_kind",
        )?;
        let labels: Vec<String> = data.rows.iter().map(|r| r[0].clone()).collect();
        let series = vec![("duplicates", RED_)];
        let svg = hbars(
            "duplicates",
            &labels,
            &stacks(&data, &series),
            "rows dropped as duplicates",
        )?;
        p.chart(Chart {
            id: "duplicates",
            title: "Rows dropped as duplicates per source kind".into(),
            data,
            series,
            svg,
        });
    } else {
        p.missing("sources", "Duplicates dropped");
    }
    p.note(
        "Rows recovered: rows of secondary copies (WebUI transcripts, run records, CLI history, \
         frozen and legacy session files, the sidebar cache) that no primary store holds — a \
         chat erased by <code>/new</code> or deleted survives only there.",
    );
    let data = fetch(
        conn,
        &["source_kind", "rows", "sessions"],
        "SELECT source_kind, count(*), count(DISTINCT session_uid) FROM events
         WHERE source_role = 'secondary' GROUP BY source_kind ORDER BY source_kind",
    )?;
    let labels: Vec<String> = data.rows.iter().map(|r| r[0].clone()).collect();
    let series = vec![("rows", TEAL)];
    let svg = hbars(
        "recovered",
        &labels,
        &stacks(&data, &series),
        "rows from secondary copies",
    )?;
    p.chart(Chart {
        id: "recovered",
        title: "Rows recovered from secondary copies per source kind".into(),
        data,
        series,
        svg,
    });
    if have_tables {
        let only = scalar(conn, "SELECT count(*) FROM sessions WHERE secondary_only")?;
        p.note(&format!(
            "<span data-fact=\"secondary_only_sessions\">{}</span> sessions are known only from secondary copies.",
            esc(&only)
        ));
    }
    Ok(())
}

fn offset_text(minutes: &str) -> String {
    let Ok(m) = minutes.parse::<i64>() else {
        return String::new();
    };
    let sign = if m < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", m.abs() / 60, m.abs() % 60)
}

fn offsets(conn: &Connection, p: &mut Page, have_tables: bool) -> Result<(), ReportError> {
    p.section(
        "offsets",
        "Time offsets",
        "nanobot writes local times; each instance's UTC offset is derived per local day from \
         evidence pairs (a local and a true-UTC record of the same moment). Each range of days \
         with one offset is a bar: the offset, its pairs of evidence and their agreement. Below, \
         how each instance's rows got their time (<code>time_basis</code>).",
    );
    if have_tables {
        let data = fetch(
            conn,
            &[
                "instance",
                "first_day",
                "last_day",
                "offset_minutes",
                "pairs",
                "agreement",
            ],
            "SELECT instance, strftime(first_day, '%Y-%m-%d'), strftime(last_day, '%Y-%m-%d'),
                    offset_minutes, pairs, agreement
             FROM tz_offsets ORDER BY instance, first_day, last_day",
        )?;
        let mut instances: Vec<String> = data.rows.iter().map(|r| r[0].clone()).collect();
        instances.dedup();
        let spans: Vec<Span> = data
            .rows
            .iter()
            .map(|r| Span {
                row: instances.iter().position(|i| *i == r[0]).unwrap_or(0),
                start: epoch_day(&r[1]).unwrap_or(0) as f64,
                end: epoch_day(&r[2]).unwrap_or(0) as f64 + 1.0,
                color: PURPLE,
                text: format!("{} ({} pairs)", offset_text(&r[3]), r[4]),
            })
            .collect();
        let svg = ranges("offsets", &instances, &spans, true)?;
        p.chart(Chart {
            id: "offsets",
            title: "UTC offset ranges per instance (tz_offsets)".into(),
            data,
            series: Vec::new(),
            svg,
        });
    } else {
        p.missing("tz_offsets", "The offset ranges");
    }
    let data = fetch(
        conn,
        &["instance", "time_basis", "rows"],
        "SELECT instance, coalesce(time_basis, '(none)') AS b, count(*)
         FROM events GROUP BY instance, b ORDER BY instance, b",
    )?;
    let labels: Vec<String> = data
        .rows
        .iter()
        .map(|r| format!("{} · {}", r[0], r[1]))
        .collect();
    let series = vec![("rows", PURPLE)];
    let svg = hbars("time-basis", &labels, &stacks(&data, &series), "rows")?;
    p.chart(Chart {
        id: "time-basis",
        title: "Rows per instance and time basis".into(),
        data,
        series,
        svg,
    });
    Ok(())
}

fn diagnostics(conn: &Connection, p: &mut Page, have_tables: bool) -> Result<(), ReportError> {
    p.section(
        "diagnostics",
        "Diagnostics",
        "What the load could not read or declared lost (<code>diagnostics</code>): rows per kind \
         and code, then the rows themselves.",
    );
    if !have_tables {
        p.missing("diagnostics", "Diagnostics");
        return Ok(());
    }
    let data = fetch(
        conn,
        &["kind", "code", "rows"],
        "SELECT kind, coalesce(code, '') AS c, count(*) AS n FROM diagnostics
         GROUP BY kind, c ORDER BY n DESC, kind, c",
    )?;
    let labels: Vec<String> = data
        .rows
        .iter()
        .map(|r| {
            if r[1].is_empty() {
                r[0].clone()
            } else {
                format!("{} · {}", r[0], r[1])
            }
        })
        .collect();
    let series = vec![("rows", RED_)];
    let svg = hbars(
        "diagnostics",
        &labels,
        &stacks(&data, &series),
        "diagnostics",
    )?;
    p.chart(Chart {
        id: "diagnostics",
        title: "Diagnostics per kind and code".into(),
        data,
        series,
        svg,
    });
    let all = scalar(conn, "SELECT count(*) FROM diagnostics")?;
    let list = fetch(
        conn,
        &[
            "kind",
            "code",
            "agent",
            "instance",
            "source_path",
            "source_line",
            "session_id",
            "message",
        ],
        &format!(
            "SELECT kind, coalesce(code, ''), coalesce(agent, ''), coalesce(instance, ''),
                    coalesce(source_path, ''), coalesce(source_line::VARCHAR, ''),
                    coalesce(session_id, ''), coalesce(message, '')
             FROM diagnostics ORDER BY ALL LIMIT {MAX_DIAGNOSTICS}"
        ),
    )?;
    p.note(&format!(
        "{} diagnostics; {} listed (at most {MAX_DIAGNOSTICS}, sorted).",
        esc(&all),
        list.rows.len()
    ));
    p.list("diagnostics", &list);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal events table (the columns the report reads) with hostile
    /// strings, and side tables with an unknown cost.
    fn write_inputs(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let c = Connection::open_in_memory()?;
        let out = dir.join("out.parquet");
        let tables = dir.join("tables");
        std::fs::create_dir_all(&tables)?;
        c.execute_batch(&format!(
            "COPY (SELECT * FROM (VALUES
               ('nanobot', '.nanobot', 'cli:<b>&x', 'u1', TIMESTAMP '2026-10-01 08:30:00', 'local_derived',
                'tool_use', '<script>alert(1)</script>&amp', 'nanobot.session_db', 'primary', NULL, 'id1'),
               ('nanobot', '.nanobot', 'cli:<b>&x', 'u1', TIMESTAMP '2026-10-01 09:00:00', 'local_derived',
                'user', NULL, 'nanobot.webui_transcript', 'secondary', NULL, 'id1'),
               ('nanobot', '.nanobot', NULL, NULL, NULL, 'local_as_utc',
                'system', NULL, 'nanobot.permissions', 'primary', NULL, 'id1'))
               AS t(agent, instance, session_id, session_uid, timestamp_local, time_basis, turn_type,
                    tool_name, source_kind, source_role, native, load_id)) TO {};
             COPY (SELECT 'nanobot' AS agent, 'cli:<b>&x' AS session_id, false AS secondary_only,
                   CAST(NULL AS DOUBLE) AS cost_usd) TO {};
             COPY (SELECT * FROM (VALUES (1790000000000, 'p<1>', 'm&1', 10, 2, NULL, NULL, NULL::DOUBLE),
                                         (1790000001000, 'p<1>', 'm2', 5, 1, 3, 0, 0.5))
                   AS t(started_at_ms, provider, model, input_tokens, output_tokens,
                        cache_read_tokens, cache_write_tokens, cost_usd)) TO {};
             COPY (SELECT '.nanobot' AS instance, DATE '2026-10-01' AS first_day,
                   DATE '2026-10-01' AS last_day, 120 AS offset_minutes, 3 AS pairs,
                   1.0 AS agreement) TO {};
             COPY (SELECT 'bad_line' AS kind, 'nanobot' AS agent, '.nanobot' AS instance,
                   'a<b>.jsonl' AS source_path, 3 AS source_line, 'EOF & <more>' AS message,
                   NULL AS session_id, NULL AS code) TO {};
             COPY (SELECT * FROM (VALUES ('nanobot.session_db', 1), ('nanobot.webui_transcript', 3),
                                         ('nanobot.permissions', 1), ('nanobot.llm_usage', 2))
                   AS t(source_kind, rows)) TO {};",
            sql_str(&out),
            sql_str(&tables.join("sessions.parquet")),
            sql_str(&tables.join("llm_calls.parquet")),
            sql_str(&tables.join("tz_offsets.parquet")),
            sql_str(&tables.join("diagnostics.parquet")),
            sql_str(&tables.join("sources.parquet")),
        ))?;
        Ok(())
    }

    #[test]
    fn data_strings_are_escaped_and_an_unknown_cost_is_not_zero()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        write_inputs(dir.path())?;
        let html = dir.path().join("r.html");
        let w = report(
            &dir.path().join("out.parquet"),
            Some(&dir.path().join("tables")),
            &html,
        )?;
        assert_eq!(w.charts, 13);
        let page = std::fs::read_to_string(&html)?;
        // the only tags are the page's own: no script, link, image or URL
        assert!(!page.contains("<script"), "a data string became a tag");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp"));
        assert!(page.contains("cli:&lt;b&gt;&amp;x"));
        assert!(page.contains("<td>EOF &amp; &lt;more&gt;</td>"));
        // (the one URL is the SVG namespace, an identifier never fetched)
        let bare = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        for banned in [
            "<link", "<img", "src=", "href=", "url(", "http:", "https:", "@import",
        ] {
            assert!(!bare.contains(banned), "{banned}");
        }
        // m&1 has no price: unknown, with its one unpriced call
        assert!(
            page.contains("<tr><td>p&lt;1&gt;</td><td>m&amp;1</td><td>unknown</td><td>1</td></tr>")
        );
        assert!(
            page.contains("<tr><td>p&lt;1&gt;</td><td>m2</td><td>0.500000</td><td>0</td></tr>")
        );
        // the WebUI store held 3 rows and 1 is out: 2 dropped as duplicates
        assert!(page.contains(
            "<tr><td>nanobot.webui_transcript</td><td>1</td><td>3</td><td>1</td><td>0</td><td>2</td></tr>"
        ));
        // nothing but the page is left beside it
        let names: Vec<String> = std::fs::read_dir(dir.path())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        // same input, same bytes
        let again = dir.path().join("again.html");
        report(
            &dir.path().join("out.parquet"),
            Some(&dir.path().join("tables")),
            &again,
        )?;
        assert_eq!(std::fs::read(&again)?, page.as_bytes());
        Ok(())
    }

    #[test]
    fn without_tables_the_sections_that_need_them_say_so() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        write_inputs(dir.path())?;
        let html = dir.path().join("r.html");
        let w = report(&dir.path().join("out.parquet"), None, &html)?;
        assert_eq!(w.charts, 6);
        let page = std::fs::read_to_string(&html)?;
        for t in ["llm_calls", "sources", "tz_offsets", "diagnostics"] {
            assert!(page.contains(&format!("data-missing=\"{t}\"")), "{t}");
        }
        Ok(())
    }

    #[test]
    fn bad_inputs_name_their_path_and_write_nothing() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        write_inputs(dir.path())?;
        let html = dir.path().join("r.html");
        let out = dir.path().join("out.parquet");
        let cases: [(PathBuf, Option<PathBuf>, String); 4] = [
            (
                dir.path().join("none.parquet"),
                None,
                "none.parquet: no such file".into(),
            ),
            (
                dir.path().join("tables/sessions.parquet"),
                None,
                "not an events table".into(),
            ),
            (
                out.clone(),
                Some(dir.path().join("nope")),
                "nope: no such directory".into(),
            ),
            (
                out.clone(),
                Some(dir.path().to_path_buf()),
                "sessions.parquet: no such file".into(),
            ),
        ];
        for (out, tables, want) in cases {
            let e = report(&out, tables.as_deref(), &html)
                .err()
                .ok_or("no error")?
                .to_string();
            assert!(e.contains(&want), "{e} lacks {want}");
            assert!(!html.exists());
        }
        let e = report(&out, None, &out)
            .err()
            .ok_or("no error")?
            .to_string();
        assert!(e.contains("is the input OUT.parquet"), "{e}");
        Ok(())
    }
}
