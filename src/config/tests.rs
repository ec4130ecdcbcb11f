use super::*;

#[test]
fn offsets() {
    assert_eq!(parse_offset("+02:00"), Ok(120));
    assert_eq!(parse_offset("-05:30"), Ok(-330));
    assert_eq!(parse_offset("+14:00"), Ok(840));
    assert!(parse_offset("+14:30").is_err());
    assert!(parse_offset("02:00").is_err());
    assert!(parse_offset("+2").is_err());
}

#[test]
fn progress_auto_needs_a_terminal_and_no_quiet() {
    let tty = Some("xterm");
    assert_eq!(When::Auto.show(true, tty, None, false), Show::Color);
    assert_eq!(When::Auto.show(true, tty, Some(""), false), Show::Color);
    assert_eq!(When::Auto.show(true, tty, Some("1"), false), Show::Plain);
    assert_eq!(When::Auto.show(false, tty, None, false), Show::Off);
    assert_eq!(When::Auto.show(true, tty, None, true), Show::Off);
    assert_eq!(When::Auto.show(true, Some("dumb"), None, false), Show::Off);
    assert_eq!(When::Always.show(false, None, None, true), Show::Color);
    assert_eq!(
        When::Always.show(false, None, Some("1"), false),
        Show::Plain
    );
    assert_eq!(When::Never.show(true, tty, None, false), Show::Off);
}

/// A ledger records how many patterns a sync was given, never one of
/// them, and rewrites what an earlier build recorded the same way (a
/// pattern with spaces included).
#[test]
fn secret_patterns_are_counted_never_given() {
    let given = |v: &[&str]| shown(v.iter().copied());
    assert_eq!(given(&[]), "");
    assert_eq!(
        given(&[
            "include_thinking",
            "secret_pattern=hunter2",
            "secret_pattern=a b",
            "follow_links"
        ]),
        "include_thinking secret_patterns=2 follow_links"
    );
    assert_eq!(given(&["follow_links"]), "follow_links");
    for (recorded, now) in [
        ("", ""),
        ("follow_links", "follow_links"),
        ("secret_pattern=hunter2", "secret_patterns=1"),
        (
            "include_thinking secret_pattern=pass word 42 secret_pattern=x follow_links",
            "include_thinking secret_patterns=2 follow_links",
        ),
    ] {
        assert_eq!(without_secret_patterns(recorded), now, "{recorded}");
    }
}

#[test]
fn sizes() {
    assert_eq!(parse_size("256MiB"), Ok(256 << 20));
    assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
    assert_eq!(parse_size("512"), Ok(512));
    assert!(parse_size("lots").is_err());
    assert!(parse_size("5XB").is_err());
}
