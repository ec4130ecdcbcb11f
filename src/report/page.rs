//! The page: one self-contained HTML document (inline CSS and SVG, no
//! script, nothing fetched), sections of prose, charts each beside the
//! table of exactly the numbers drawn, and lists; every data string
//! escaped ([`esc`]).
//!
//! It fits a phone as well as a desktop ([`STYLE`]'s media queries): each
//! chart is drawn for both widths and the page shows the one drawn for its
//! width; below 900 px every table reflows, a row a block of its cells, each
//! cell named by its column (`data-c`); a date and its time never break.

use std::fmt::Write as _;

use plotters::prelude::RGBColor;

use super::chart::hex;
use super::query::Data;

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

/// One chart: its numbers, the columns drawn as bars and the SVG.
pub(super) struct Chart {
    pub(super) id: &'static str,
    pub(super) title: String,
    pub(super) data: Data,
    /// Columns drawn as bar segments, with their colours; empty for a range
    /// chart (one bar per row).
    pub(super) series: Vec<(String, RGBColor)>,
    /// The SVGs, each with the class of the page width it is drawn for
    /// (`desk`, `phone`).
    pub(super) svgs: Vec<(&'static str, String)>,
}

#[derive(Default)]
pub(super) struct Page {
    pub(super) html: String,
    pub(super) charts: usize,
    in_section: bool,
    in_details: bool,
}

impl Page {
    /// A new section (closing the one before): `<h2>`, or `<h3>` inside a
    /// collapsed group ([`Page::collapsed`]).
    pub(super) fn section(&mut self, id: &str, title: &str, intro: &str) {
        if self.in_section {
            self.html.push_str("</section>\n");
        }
        self.in_section = true;
        let h = if self.in_details { "h3" } else { "h2" };
        let _ = writeln!(
            self.html,
            "<section id=\"{id}\">\n<{h}>{}</{h}>\n<p class=\"intro\">{intro}</p>",
            esc(title)
        );
    }

    /// A group of sections shown collapsed (`<details>`) under `title`,
    /// until the page ends ([`Page::finish`]).
    pub(super) fn collapsed(&mut self, id: &str, title: &str, intro: &str) {
        if self.in_section {
            self.html.push_str("</section>\n");
            self.in_section = false;
        }
        self.in_details = true;
        let _ = writeln!(
            self.html,
            "<details id=\"{id}\">\n<summary><h2>{}</h2></summary>\n<p class=\"intro\">{intro}</p>",
            esc(title)
        );
    }

    /// Close what is open and end the document.
    pub(super) fn finish(&mut self) {
        if self.in_section {
            self.html.push_str("</section>\n");
        }
        if self.in_details {
            self.html.push_str("</details>\n");
        }
        self.html.push_str("</body>\n</html>\n");
    }

    pub(super) fn note(&mut self, html: &str) {
        let _ = writeln!(self.html, "<p class=\"note\">{html}</p>");
    }

    pub(super) fn missing(&mut self, table: &str, what: &str) {
        let _ = writeln!(
            self.html,
            "<p class=\"missing\" data-missing=\"{table}\">{} needs the side table <code>{table}</code>: \
             run <code>nanoload report OUT.parquet --tables DIR report.html</code> with the \
             <code>--tables DIR</code> the load wrote.</p>",
            esc(what)
        );
    }

    pub(super) fn chart(&mut self, c: Chart) {
        self.charts += 1;
        let series: Vec<String> = c.series.iter().map(|(s, _)| esc(s)).collect();
        // a table of many columns goes below its chart, at full width
        let wide = if c.data.columns.len() > 4 {
            " class=\"wide\""
        } else {
            ""
        };
        let _ = write!(self.html, "<figure{wide} data-chart=\"{}\"", c.id);
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
            for (class, svg) in &c.svgs {
                let _ = writeln!(
                    self.html,
                    "<div class=\"svg {class}\">{}</div>",
                    svg.trim_end()
                );
            }
        }
        let _ = writeln!(
            self.html,
            "<div class=\"tbl\"><table data-chart-table=\"{}\">",
            c.id
        );
        table_body(&mut self.html, &c.data);
        self.html.push_str("</table></div>\n</figure>\n");
    }

    pub(super) fn list(&mut self, id: &str, data: &Data) {
        let _ = writeln!(
            self.html,
            "<div class=\"tbl list\"><table data-list=\"{id}\">"
        );
        table_body(&mut self.html, data);
        self.html.push_str("</table></div>\n");
    }
}

/// How a column's cells are shown.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Cell {
    /// As it is, left-aligned.
    Text,
    /// A date or a date and time (`2026-03-05 13:59:00`): as it is,
    /// left-aligned, never broken over lines.
    Date,
    /// A count: thousands separators, right-aligned.
    Count,
    /// USD: to the cent, more digits only below a cent (`unknown` as it
    /// is), right-aligned.
    Usd,
    /// A decimal (an agreement, a rate): as it is, right-aligned.
    Decimal,
    /// A percentage: `12.5 %`, right-aligned.
    Percent,
}

/// Columns that hold labels even when their values are digits.
const LABEL_COLUMNS: [&str; 9] = [
    "hour",
    "day",
    "session_id",
    "session_uid",
    "instance",
    "first_day",
    "last_day",
    "load_id",
    "source_line",
];

/// How the cells of column `i` of `data` are shown: by its name, and
/// numeric only when every value is a number (or an unknown cost).
pub(super) fn cell_kind(data: &Data, i: usize) -> Cell {
    let name = data.columns[i].as_str();
    let values = || data.rows.iter().chain(&data.total).map(|r| r[i].as_str());
    // a TOTAL row's label does not make a column of dates text
    let dated = data.rows.iter().any(|r| !r[i].is_empty())
        && data.rows.iter().all(|r| r[i].is_empty() || is_date(&r[i]));
    if dated {
        return Cell::Date;
    }
    if LABEL_COLUMNS.contains(&name) {
        return Cell::Text;
    }
    let usd = name.contains("cost") || name == "total" || data.usd.contains(&i);
    let all = |f: &dyn Fn(&str) -> bool| values().all(|v| v.is_empty() || f(v));
    // an empty column is text, unless it is a rate (as before)
    let some = values().any(|v| !v.is_empty());
    if usd && some && all(&|v| v == "unknown" || v.parse::<f64>().is_ok()) {
        Cell::Usd
    } else if name.ends_with("rate") && all(&|v| v.parse::<f64>().is_ok()) {
        Cell::Percent
    } else if some && all(&|v| v.parse::<i64>().is_ok()) {
        Cell::Count
    } else if some && all(&|v| v.parse::<f64>().is_ok()) {
        Cell::Decimal
    } else {
        Cell::Text
    }
}

/// `YYYY-MM-DD`, alone or followed by ` HH:MM` or ` HH:MM:SS`.
fn is_date(v: &str) -> bool {
    let shape = |s: &str, p: &str| {
        s.len() == p.len()
            && s.bytes().zip(p.bytes()).all(|(c, p)| {
                if p == b'9' {
                    c.is_ascii_digit()
                } else {
                    c == p
                }
            })
    };
    ["9999-99-99", "9999-99-99 99:99", "9999-99-99 99:99:99"]
        .iter()
        .any(|p| shape(v, p))
}

/// A cell's text as shown.
pub(super) fn shown(kind: Cell, v: &str) -> String {
    match kind {
        Cell::Text | Cell::Date | Cell::Decimal => v.to_string(),
        _ if v.is_empty() => String::new(),
        Cell::Count => v
            .parse::<i64>()
            .map_or(v.to_string(), crate::readout::thousands),
        Cell::Usd => crate::readout::dollars(v),
        Cell::Percent => format!("{v} %"),
    }
}

fn table_body(html: &mut String, data: &Data) {
    let kinds: Vec<Cell> = (0..data.columns.len())
        .map(|i| cell_kind(data, i))
        .collect();
    let class = |k: Cell| match k {
        Cell::Text => "",
        Cell::Date => " class=\"d\"",
        _ => " class=\"n\"",
    };
    html.push_str("<thead><tr>");
    for (c, k) in data.columns.iter().zip(&kinds) {
        let k = if *k == Cell::Date { Cell::Text } else { *k };
        let _ = write!(html, "<th{}>{}</th>", class(k), esc(c));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    // each cell names its column (`data-c`): a phone shows the name
    // beside the value when the row reflows
    let names: Vec<String> = data.columns.iter().map(|c| esc(c)).collect();
    let row = |html: &mut String, r: &[String]| {
        html.push_str("<tr>");
        for ((v, k), c) in r.iter().zip(&kinds).zip(&names) {
            match k {
                Cell::Text => {
                    let _ = write!(html, "<td data-c=\"{c}\">{}</td>", esc(v));
                }
                // a TOTAL row's label in a column of dates
                Cell::Date if !is_date(v) => {
                    let _ = write!(html, "<td data-c=\"{c}\">{}</td>", esc(v));
                }
                Cell::Date => {
                    let _ = write!(html, "<td class=\"d\" data-c=\"{c}\">{}</td>", esc(v));
                }
                _ => {
                    // the value as computed, then as shown
                    let _ = write!(
                        html,
                        "<td class=\"n\" data-c=\"{c}\" data-v=\"{}\">{}</td>",
                        esc(v),
                        esc(&shown(*k, v))
                    );
                }
            }
        }
        html.push_str("</tr>\n");
    };
    for r in &data.rows {
        row(html, r);
    }
    html.push_str("</tbody>\n");
    if let Some(t) = &data.total {
        html.push_str("<tfoot>");
        row(html, t);
        html.push_str("</tfoot>\n");
    }
}

/// The style sheet: a desktop's layout, then what changes below 900 px,
/// where a desktop's chart would be drawn below its size (its text below
/// 11 px): the charts drawn for a phone, tables reflowed (a row a block of
/// its cells, each named by its column), tighter margins.
pub(super) const STYLE: &str = "
body{font-family:'DejaVu Sans',sans-serif;color:#222;background:#fff;margin:0 auto;padding:8px 24px 40px;max-width:1240px}
h1{font-size:24px;margin:16px 0 4px;overflow-wrap:anywhere}h2{font-size:19px;margin:0 0 4px;border-bottom:2px solid #1f77b4;padding-bottom:3px}
section{margin:28px 0}p{margin:6px 0;font-size:14px;overflow-wrap:break-word}.intro{color:#444}.note{color:#555;font-size:13px}
.missing{background:#fff4e0;border-left:4px solid #ff7f0e;padding:6px 10px}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,auto);gap:2px 14px;font-size:14px;margin:8px 0}
dl.facts dt{color:#555}dl.facts dd{margin:0;font-weight:bold;overflow-wrap:anywhere}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
.card{border:1px solid #d8d8d8;border-radius:6px;padding:8px 14px;min-width:150px}
.card-label{display:block;color:#555;font-size:13px}.card-value{display:block;font-size:22px;font-weight:bold;text-align:right;overflow-wrap:break-word}
.card-basis{display:block;color:#555;font-size:12px;text-align:right}
figure{display:flex;flex-wrap:wrap;gap:12px 18px;align-items:flex-start;margin:14px 0;padding:8px;border:1px solid #e4e4e4;border-radius:4px}
figcaption{flex:1 0 100%;font-weight:bold;font-size:15px}.rows{font-weight:normal;color:#777;font-size:13px}
.key{font-weight:normal;font-size:13px;margin-left:10px;white-space:nowrap}
.sw{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
.svg svg{display:block;max-width:100%;height:auto}.svg.phone{display:none}
.tbl{border:1px solid #ddd;flex:1 1 300px;min-width:0}
figure.wide .tbl{flex-basis:100%}
table{border-collapse:collapse;font-size:12px;width:100%}
th{background:#f3f3f3;text-align:left;padding:3px 6px;overflow-wrap:anywhere}
td{padding:2px 6px;border-top:1px solid #eee;overflow-wrap:anywhere}
th.n,td.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}
td.d{white-space:nowrap}
tfoot td{font-weight:bold;border-top:2px solid #bbb}
details{margin:28px 0}summary{cursor:pointer}summary h2{display:inline-block;border:0}
details h3{font-size:16px;margin:0 0 4px;border-bottom:1px solid #1f77b4}
.empty{color:#777;font-style:italic}
code{font-size:13px;background:#f4f4f4;padding:0 3px}
@media (max-width:899px){
.svg.desk{display:none}.svg.phone{display:block}
body{padding:4px 12px 32px}h1{font-size:20px}section,details{margin:22px 0}
figure{padding:6px;gap:10px}.key{white-space:normal;overflow-wrap:anywhere;margin-left:6px}
.card{flex:1 1 130px;min-width:0;padding:6px 10px}.card-value{font-size:19px}
.tbl table,.tbl tbody,.tbl tfoot{display:block}.tbl thead{display:none}
.tbl tr{display:flex;flex-wrap:wrap;gap:1px 12px;padding:4px 6px;border-top:1px solid #eee}
.tbl td{padding:0;border:0;min-width:0;max-width:100%}
.tbl td::before{content:attr(data-c) ' ';color:#777;font-weight:normal;white-space:normal;overflow-wrap:anywhere}
.tbl td:first-child{font-weight:bold}.tbl td:first-child::before{content:none}
.tbl td:empty{display:none}.tbl tbody tr:first-child{border-top:0}
.tbl tfoot tr{border-top:2px solid #bbb}
}
";
