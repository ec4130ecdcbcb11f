//! Time values as the stores write them, to microseconds since the epoch.
//!
//! ```text
//! naive local ISO   2026-10-01T08:41:00 | 2026-10-01T08:30:00.040000 | 2026-10-01 08:30:00[.f]
//!                   2026-09-30 12:00 (memory journal, minute precision)
//! UTC ISO with Z    2026-11-29T22:05:06.279Z (nanoclaw), zone-less strings read as UTC
//! epoch             milliseconds (llm_calls, WebUI, run records), seconds as float (pairing)
//! ```
//! A naive local time is kept as the wall-clock value "as if UTC"; the SQL steps
//! subtract the derived offset.

use chrono::{DateTime, NaiveDateTime};

const NAIVE_FORMATS: [&str; 4] = [
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
];

/// Parse a naive (zone-less) timestamp to microseconds of its wall clock.
pub fn parse_naive(s: &str) -> Option<i64> {
    let s = s.trim();
    NAIVE_FORMATS
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
        .map(|t| t.and_utc().timestamp_micros())
}

/// Parse an ISO-8601 timestamp with a zone (`Z`, `+02:00`) to UTC
/// microseconds; a zone-less one is read as UTC (as nanoclaw's host does).
pub fn parse_utc(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_micros());
    }
    parse_naive(s)
}

pub fn from_epoch_ms(ms: i64) -> Option<i64> {
    ms.checked_mul(1000)
}

pub fn from_epoch_secs_f64(s: f64) -> Option<i64> {
    let us = (s * 1_000_000.0).round();
    (us.is_finite() && us.abs() < 9.0e18).then_some(us as i64)
}

/// ISO-8601 UTC with `Z`, seconds precision plus milliseconds when non-zero
/// (`2026-10-22T09:10:00Z`), as docs/design.md's permission rows use.
pub fn format_utc(us: i64) -> String {
    match DateTime::from_timestamp_micros(us) {
        Some(t) if t.timestamp_subsec_millis() == 0 => t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => us.to_string(),
    }
}

/// A UTC offset in minutes as `+HH:MM` / `-HH:MM` (the form
/// `--utc-offset` takes).
pub fn offset_label(minutes: i64) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", minutes.abs() / 60, minutes.abs() % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_forms_all_parse_to_the_same_clock() {
        let base = parse_naive("2026-10-01T08:30:00");
        assert_eq!(base, Some(1_790_843_400_000_000));
        assert_eq!(parse_naive("2026-10-01 08:30:00"), base);
        assert_eq!(parse_naive("2026-10-01 08:30"), base);
        assert_eq!(
            parse_naive("2026-10-01T08:30:00.040000").map(|v| v - 40_000),
            base
        );
        assert_eq!(parse_naive("not a time"), None);
    }

    #[test]
    fn utc_forms() {
        assert_eq!(
            parse_utc("2026-09-29T19:14:05.290Z"),
            Some(1_790_709_245_290_000)
        );
        assert_eq!(
            parse_utc("2026-09-29T21:14:05.290+02:00"),
            Some(1_790_709_245_290_000)
        );
        assert_eq!(
            parse_utc("2026-09-29 19:14:05.290"),
            Some(1_790_709_245_290_000)
        );
        assert_eq!(format_utc(1_792_660_200_000_000), "2026-10-22T09:10:00Z");
        assert_eq!(
            format_utc(1_790_709_245_290_000),
            "2026-09-29T19:14:05.290Z"
        );
        assert_eq!(
            from_epoch_secs_f64(1792659600.0),
            Some(1_792_659_600_000_000)
        );
    }
}
