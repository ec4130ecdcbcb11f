//! The report's charts: plotters' SVG backend (no font file: the browser
//! sets the text), bars stacked per row in the series' colours. Every
//! chart is drawn in one frame ([`plot`]): a white background, the axes
//! with their labels and description, the mesh lines across the bars'
//! length only; vertical bars per day or label ([`vbars`]), horizontal bars
//! per label ([`hbars`]) and ranges from a start to an end per label
//! ([`ranges`]) differ only in what they draw in it.
//!
//! Each chart is drawn twice, for a [`Fit`]: [`DESKTOP`] and [`PHONE`]
//! (the page shows one by its width). An SVG scaled down shrinks its text
//! with it, so each is drawn at the width it is shown at and its text is
//! 12 px there; labels are as many and as long as that width holds (a text
//! is estimated at [`CHAR_PX`] a character), and the margins hold the
//! outermost labels and the notes beside range bars.

use std::ops::Range;

use chrono::{NaiveDate, NaiveDateTime};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ReportError;
use super::query::Data;

const BG: RGBColor = RGBColor(255, 255, 255);
const INK: RGBColor = RGBColor(68, 68, 68);
pub(super) const BLUE_: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
pub(super) const ORANGE: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
pub(super) const GREEN_: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
pub(super) const RED_: RGBColor = RGBColor(0xd6, 0x27, 0x28);
pub(super) const PURPLE: RGBColor = RGBColor(0x94, 0x67, 0xbd);
pub(super) const BROWN: RGBColor = RGBColor(0x8c, 0x56, 0x4b);
pub(super) const GREY: RGBColor = RGBColor(0x7f, 0x7f, 0x7f);
pub(super) const TEAL: RGBColor = RGBColor(0x17, 0xbe, 0xcf);
pub(super) const PINK: RGBColor = RGBColor(0xe3, 0x77, 0xc2);

/// One colour per model of a chart stacked by model, in order; the rest
/// of the models together are [`GREY`].
pub(super) const MODEL_COLORS: [RGBColor; 8] =
    [BLUE_, ORANGE, GREEN_, RED_, PURPLE, BROWN, PINK, TEAL];

pub(super) fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

const FONT: &str = "sans-serif";
/// The size of every chart text, in plotters' points: its SVG backend
/// writes a font size of points / 1.24, so 15 is 12.1 px (11 px or more
/// while the SVG is drawn at 91 % of its width or more).
const TEXT: u32 = 15;
/// A character of chart text, in pixels, rounded up (DejaVu Sans' digits
/// are 7.7 px at 12.1 px).
const CHAR_PX: u32 = 8;

/// The width a chart is drawn for.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fit {
    /// Its SVG's width, in pixels.
    width: u32,
    /// A range chart's width (one row of labels on the left, a note beside
    /// each bar).
    range_width: u32,
    /// A row's label is cut to this many characters (the table holds it whole).
    label_chars: usize,
    /// The notes beside range bars keep their parenthesis.
    detail: bool,
    /// The blank margin around the frame.
    margin: u32,
    /// The SVG's class: which page width shows it.
    pub(super) class: &'static str,
}

/// For a page 900 px wide or more: charts 720 px wide (ranges 900), shown
/// at their size.
pub(super) const DESKTOP: Fit = Fit {
    width: 720,
    range_width: 900,
    label_chars: 40,
    detail: true,
    margin: 12,
    class: "desk",
};

/// For a page narrower than 900 px: charts 340 px wide, a phone's width
/// (390 px) less the page's padding.
pub(super) const PHONE: Fit = Fit {
    width: 340,
    range_width: 340,
    label_chars: 14,
    detail: false,
    margin: 8,
    class: "phone",
};

/// The pixels a text of `chars` characters takes.
fn text_px(chars: usize) -> u32 {
    chars as u32 * CHAR_PX
}

/// How many labels of `chars` characters an axis `px` long holds side by
/// side, at least 1 and at most `most`.
fn fitting(px: u32, chars: usize, most: usize) -> usize {
    (px / (text_px(chars) + 2 * CHAR_PX)).clamp(1, most.max(1) as u32) as usize
}

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

/// A count on an axis: integers only (a position between two is left
/// unlabelled), short as [`axis_num`].
fn axis_count(v: f64) -> String {
    if (v - v.round()).abs() > 1e-9 {
        String::new()
    } else {
        axis_num(v.round())
    }
}

/// How many labels a value axis up to `top` gets — at most `most`, and
/// for counts no more than there are integers on it (so every tick is one)
/// — and how each is written.
fn value_ticks(top: f64, counts: bool, most: usize) -> (usize, fn(&f64) -> String) {
    if counts {
        ((top.floor() as usize + 1).clamp(2, most.max(2)), |v| {
            axis_count(*v)
        })
    } else {
        (most.max(2), |v| axis_num(*v))
    }
}

/// The most characters a value axis label up to `top` takes (`12.3k`,
/// `0.0125`).
fn value_chars(top: f64, counts: bool) -> usize {
    if counts || top >= 1e4 { 6 } else { 7 }
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

pub(super) fn epoch_day(d: &str) -> Option<i64> {
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

pub(super) fn epoch_seconds(t: &str) -> Option<f64> {
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

pub(super) type Stack = Vec<(f64, RGBColor)>;

/// The axis of a chart's values: its description and whether it counts
/// (integer ticks only) or measures (USD, a rate).
#[derive(Clone, Copy)]
pub(super) struct Value<'a> {
    pub(super) desc: &'a str,
    pub(super) counts: bool,
}

/// Where bars of a vertical chart stand on the x axis.
#[derive(Clone, Copy)]
pub(super) enum XAxis<'a> {
    /// Days since 1970-01-01, labelled as dates.
    Days,
    /// Positions 0, 1, … labelled with these texts.
    Labels(&'a [String]),
}

/// A plotters error of chart `id`, as the report's error.
fn chart_err<E: std::fmt::Display>(id: &'static str) -> impl Fn(E) -> ReportError {
    move |e| ReportError::Chart(id, e.to_string())
}

/// An axis: its range, how many labels it gets and how each is written.
struct Axis<'a> {
    range: Range<f64>,
    labels: usize,
    label: &'a dyn Fn(&f64) -> String,
    /// The room for its labels, in pixels.
    area: u32,
}

/// The frame of a chart: its size, its axes, and which one the bars stand
/// on (`vertical`: bars rise from the x axis, the y axis is described and
/// its mesh lines kept; else bars run along the x axis, described).
struct Frame<'a> {
    id: &'static str,
    size: (u32, u32),
    x: Axis<'a>,
    y: Axis<'a>,
    vertical: bool,
    desc: &'a str,
    /// The blank margin around the frame, and on the right (room for the
    /// half of the last x label that passes the plot's end).
    margin: u32,
    right: u32,
}

/// The room an x axis label of `chars` characters needs right of the plot:
/// half of it (labels are centred on their tick), at least the margin.
fn right_margin(fit: Fit, chars: usize) -> u32 {
    (text_px(chars) / 2 + 4).max(fit.margin)
}

type Chart2d<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draw a chart: the frame, then `draw` in it; the SVG text.
fn plot(
    f: Frame,
    draw: impl FnOnce(&mut Chart2d) -> Result<(), ReportError>,
) -> Result<String, ReportError> {
    let id = f.id;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, f.size).into_drawing_area();
        root.fill(&BG).map_err(chart_err(id))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(f.margin)
            .margin_right(f.right)
            .x_label_area_size(f.x.area)
            .y_label_area_size(f.y.area)
            .build_cartesian_2d(f.x.range, f.y.range)
            .map_err(chart_err(id))?;
        let mut mesh = chart.configure_mesh();
        if f.vertical {
            mesh.disable_x_mesh().y_desc(f.desc);
        } else {
            mesh.disable_y_mesh().x_desc(f.desc);
        }
        mesh.x_labels(f.x.labels)
            .y_labels(f.y.labels)
            .x_label_formatter(f.x.label)
            .y_label_formatter(f.y.label)
            .label_style((FONT, TEXT).into_font().color(&INK))
            .axis_desc_style((FONT, TEXT).into_font().color(&INK))
            .draw()
            .map_err(chart_err(id))?;
        draw(&mut chart)?;
        root.present().map_err(chart_err(id))?;
    }
    Ok(svg)
}

/// The largest stack's total, with room above it (1 when all are empty).
fn top(stacks: &[Stack]) -> f64 {
    let top = stacks
        .iter()
        .map(|s| s.iter().map(|(v, _)| v).sum::<f64>())
        .fold(0.0, f64::max);
    if top > 0.0 { top * 1.08 } else { 1.0 }
}

/// A stack's segments from 0 up, the empty ones left out: (from, to, colour).
fn segments(stack: &Stack) -> Vec<(f64, f64, RGBColor)> {
    let mut acc = 0.0;
    stack
        .iter()
        .filter(|(v, _)| *v > 0.0)
        .map(|(v, c)| {
            let s = (acc, acc + v, *c);
            acc += v;
            s
        })
        .collect()
}

/// Vertical stacked bars, one stack per x position; each segment a rect.
pub(super) fn vbars(
    id: &'static str,
    xs: &[f64],
    axis: XAxis,
    stacks: &[Stack],
    y: Value,
    flagged: &[bool],
    fit: Fit,
) -> Result<String, ReportError> {
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
    let (x0, x1) = if xs.is_empty() {
        (-0.5, 0.5)
    } else {
        (lo - 0.6, hi + 0.6)
    };
    // the x labels: dates, or the labels given (as many as fit)
    let (x_chars, most) = match axis {
        XAxis::Days => (10, 8),
        XAxis::Labels(l) => (
            l.iter().map(|s| s.chars().count()).max().unwrap_or(1),
            l.len().clamp(1, 24),
        ),
    };
    let fmt = |x: &f64| match axis {
        XAxis::Days => day_label(*x),
        XAxis::Labels(l) => index_label(l, *x),
    };
    let top = top(stacks);
    let (n_values, value_label) = value_ticks(top, y.counts, 6);
    // the value labels beside the axis description, turned upright
    let y_area = text_px(value_chars(top, y.counts)) + 3 * CHAR_PX;
    let right = right_margin(fit, x_chars);
    let plot_w = fit.width.saturating_sub(fit.margin + right + y_area);
    let frame = Frame {
        id,
        size: (fit.width, if fit.detail { 300 } else { 240 }),
        x: Axis {
            range: x0..x1,
            labels: fitting(plot_w, x_chars, most),
            label: &fmt,
            area: 40,
        },
        y: Axis {
            range: 0f64..top,
            labels: n_values,
            label: &value_label,
            area: y_area,
        },
        vertical: true,
        desc: y.desc,
        margin: fit.margin,
        right,
    };
    plot(frame, |chart| {
        let rects = xs.iter().zip(stacks).flat_map(|(x, stack)| {
            segments(stack)
                .into_iter()
                .map(move |(a, b, c)| Rectangle::new([(x - 0.4, a), (x + 0.4, b)], c.filled()))
        });
        chart.draw_series(rects).map_err(chart_err(id))?;
        // a flagged stack (a day with unpriced calls) gets a `*` above it
        let stars =
            xs.iter()
                .zip(stacks)
                .zip(flagged)
                .filter(|(_, f)| **f)
                .map(|((x, stack), _)| {
                    let h: f64 = stack.iter().map(|(v, _)| v).sum();
                    Text::new(
                        "*".to_string(),
                        (*x - 0.15, h + top * 0.06),
                        (FONT, TEXT + 3).into_font().color(&INK),
                    )
                });
        chart.draw_series(stars).map_err(chart_err(id))?;
        Ok(())
    })
}

/// The labels of rows drawn from the top (row i at y = n - 1 - i), cut to
/// what `fit` holds, and the room they need.
fn row_labels(labels: &[String], fit: Fit) -> (Vec<String>, u32) {
    let shown: Vec<String> = labels.iter().map(|l| cut(l, fit.label_chars)).collect();
    let chars = shown.iter().map(|l| l.chars().count()).max().unwrap_or(4);
    let px = text_px(chars.min(fit.label_chars)) + 2 * CHAR_PX;
    (shown.into_iter().rev().collect(), px)
}

/// Horizontal stacked bars, one per label, the first on top.
pub(super) fn hbars(
    id: &'static str,
    labels: &[String],
    stacks: &[Stack],
    x: Value,
    fit: Fit,
) -> Result<String, ReportError> {
    let n = labels.len();
    let (by_y, label_px) = row_labels(labels, fit);
    let top = top(stacks);
    let chars = value_chars(top, x.counts);
    let right = right_margin(fit, chars);
    let plot_w = fit.width.saturating_sub(fit.margin + right + label_px);
    let (n_values, value_label) = value_ticks(top, x.counts, fitting(plot_w, chars, 6));
    let frame = Frame {
        id,
        size: (fit.width, 76 + 20 * n.max(1) as u32),
        x: Axis {
            range: 0f64..top,
            labels: n_values,
            label: &value_label,
            area: 44,
        },
        y: Axis {
            range: -0.5f64..(n.max(1) as f64 - 0.5),
            labels: n.max(1),
            label: &|y| index_label(&by_y, *y),
            area: label_px,
        },
        vertical: false,
        desc: x.desc,
        margin: fit.margin,
        right,
    };
    plot(frame, |chart| {
        let rects = stacks.iter().enumerate().flat_map(|(i, stack)| {
            let y = (n - 1 - i) as f64;
            segments(stack)
                .into_iter()
                .map(move |(a, b, c)| Rectangle::new([(a, y - 0.35), (b, y + 0.35)], c.filled()))
        });
        chart.draw_series(rects).map_err(chart_err(id))?;
        Ok(())
    })
}

/// One bar of a range chart: its row (a label index), its start and end on
/// the x axis, colour and a note drawn beside it (a phone's drops what
/// stands in parentheses: the table beside holds it).
pub(super) struct Span {
    pub(super) row: usize,
    pub(super) start: f64,
    pub(super) end: f64,
    pub(super) color: RGBColor,
    pub(super) text: String,
}

/// What the x axis of a range chart measures: local days, or times —
/// local where an offset is known, UTC where not — as its description
/// says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Times {
    /// Local days (`tz_offsets`).
    Days,
    /// Every time drawn is local.
    Local,
    /// Every time drawn is UTC (no offset is known: nanoclaw).
    Utc,
    /// Some are local, some UTC.
    Mixed,
}

impl Times {
    fn desc(self, fit: Fit) -> &'static str {
        match self {
            Times::Days => "local day",
            Times::Local => "local time",
            Times::Utc => "UTC time",
            Times::Mixed if fit.detail => "local time; UTC where no offset is known",
            Times::Mixed => "local or UTC time",
        }
    }
}

/// Bars from start to end on rows of labels (the first on top); x as
/// seconds (labelled as dates or times) or, for [`Times::Days`], days.
pub(super) fn ranges(
    id: &'static str,
    labels: &[String],
    spans: &[Span],
    times: Times,
    fit: Fit,
) -> Result<String, ReportError> {
    let days = times == Times::Days;
    let n = labels.len().max(1);
    let (by_y, label_px) = row_labels(labels, fit);
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
    let notes: Vec<String> = spans
        .iter()
        .map(|s| match s.text.find(" (") {
            Some(i) if !fit.detail => s.text[..i].to_string(),
            _ => s.text.clone(),
        })
        .collect();
    // room for the longest x label's half: `%m-%d %H:%M`
    let right = right_margin(fit, 11);
    let plot_w = fit
        .range_width
        .saturating_sub(fit.margin + right + label_px) as f64;
    // the axis runs on until each bar's note fits after it: a note of r of
    // the plot's width after a bar ending at e needs x1 >= x0 + (e - x0) /
    // (1 - r) (r taken at most 0.6: a longer note on a narrow chart is cut)
    let x0 = lo - pad;
    let x1 = spans
        .iter()
        .zip(&notes)
        .map(|(s, note)| {
            let r = ((text_px(note.chars().count()) + CHAR_PX) as f64 / plot_w.max(1.0) + 0.01)
                .min(0.6);
            x0 + (s.end - x0) / (1.0 - r)
        })
        .fold(hi + pad, f64::max);
    // a bar is at least 0.4% of the axis wide: a one-message session shows
    let min_w = (x1 - x0) * 0.004;
    // times of one day are labelled by the hour and the day said once
    let at = |x: f64| chrono::DateTime::from_timestamp(x as i64, 0).map(|t| t.date_naive());
    let (format, x_chars, day) = if days || (x1 - x0) / 86_400.0 > 3.0 {
        ("%Y-%m-%d", 10, None)
    } else if at(x0) == at(x1) {
        ("%H:%M", 5, at(x0))
    } else {
        ("%m-%d %H:%M", 11, None)
    };
    let desc = match day {
        Some(d) => format!("{}, {}", times.desc(fit), d.format("%Y-%m-%d")),
        None => times.desc(fit).to_string(),
    };
    let fmt = |x: &f64| {
        if days {
            day_label(x.round())
        } else {
            chrono::DateTime::from_timestamp(*x as i64, 0)
                .map(|t| t.naive_utc().format(format).to_string())
                .unwrap_or_default()
        }
    };
    let frame = Frame {
        id,
        size: (fit.range_width, 76 + 20 * n as u32),
        x: Axis {
            range: x0..x1,
            labels: fitting(plot_w as u32, x_chars, 6),
            label: &fmt,
            area: 44,
        },
        y: Axis {
            range: -0.5f64..(n as f64 - 0.5),
            labels: n,
            label: &|y| index_label(&by_y, *y),
            area: label_px,
        },
        vertical: false,
        desc: &desc,
        margin: fit.margin,
        right,
    };
    plot(frame, |chart| {
        chart
            .draw_series(spans.iter().map(|s| {
                let y = (n - 1 - s.row) as f64;
                let end = s.end.max(s.start + min_w);
                Rectangle::new([(s.start, y - 0.35), (end, y + 0.35)], s.color.filled())
            }))
            .map_err(chart_err(id))?;
        chart
            .draw_series(
                spans
                    .iter()
                    .zip(&notes)
                    .filter(|(_, note)| !note.is_empty())
                    .map(|(s, note)| {
                        let y = (n - 1 - s.row) as f64;
                        let end = s.end.max(s.start + min_w);
                        Text::new(
                            note.clone(),
                            (end + min_w, y + 0.3),
                            (FONT, TEXT).into_font().color(&INK),
                        )
                    }),
            )
            .map_err(chart_err(id))?;
        Ok(())
    })
}

/// The stacks of `data`: per row, each series column's value and colour.
pub(super) fn stacks(data: &Data, series: &[(String, RGBColor)]) -> Vec<Stack> {
    let cols: Vec<(usize, RGBColor)> = series.iter().map(|(s, c)| (data.col(s), *c)).collect();
    (0..data.rows.len())
        .map(|i| {
            cols.iter()
                .map(|(c, color)| (data.num(i, *c), *color))
                .collect()
        })
        .collect()
}
