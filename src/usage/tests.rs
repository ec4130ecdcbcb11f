//! The pure parts of `nanoload usage`: parsing and formatting.

use super::render::dollars;
use super::*;

#[test]
fn a_zone_is_utc_an_offset_or_a_tz_database_name() {
    assert_eq!(Zone::parse("UTC"), Ok(Zone::Fixed(0)));
    assert_eq!(Zone::parse("+05:30"), Ok(Zone::Fixed(330)));
    assert_eq!(
        Zone::parse("-03:00").map(|z| z.label()),
        Ok("UTC-03:00".into())
    );
    assert_eq!(
        Zone::parse("Europe/Berlin").map(|z| z.label()),
        Ok("Europe/Berlin".into())
    );
    assert_eq!(
        Zone::parse("Mars/Olympus").map_err(|e| e.to_string()),
        Err("\"Mars/Olympus\" is no time zone: give UTC, an offset (+05:30) or a tz database name (Europe/Berlin)".into())
    );
}

#[test]
fn a_date_is_iso_or_compact() {
    let d = NaiveDate::from_ymd_opt(2026, 3, 1);
    assert_eq!(parse_date("2026-03-01").ok(), d);
    assert_eq!(parse_date("20260301").ok(), d);
    assert_eq!(
        parse_date("March 1").map_err(|e| e.to_string()),
        Err("\"March 1\" is no date: give YYYY-MM-DD (or YYYYMMDD)".into())
    );
}

#[test]
fn costs_show_to_cents_and_below_a_cent_to_two_digits() {
    assert_eq!(dollars("0.000000"), "$0.00");
    assert_eq!(dollars("0.011906"), "$0.01");
    assert_eq!(dollars("1234.5"), "$1,234.50");
    assert_eq!(dollars("0.004200"), "$0.0042");
    assert_eq!(dollars("0.000786"), "$0.00079");
    assert_eq!(dollars("unknown"), "unknown");
}
