//! Whether a test may rewrite its committed expectations (goldens, the
//! secrets corpus report): one rule for the integration tests (through
//! `common`) and the unit tests (through `src/testutil.rs`), which include
//! this file.

/// `NANOLOAD_BLESS` as read from `bless`, given `CI`: `Ok(true)` only for
/// `1` outside CI; under CI (set, not empty) any value of `NANOLOAD_BLESS`
/// is an error that says why, so a blessed run can never pass there.
pub fn bless_from(ci: Option<&str>, bless: Option<&str>) -> Result<bool, String> {
    match (ci.filter(|c| !c.is_empty()), bless) {
        (_, None) => Ok(false),
        (Some(ci), Some(b)) => Err(format!(
            "NANOLOAD_BLESS={b:?} under CI={ci:?}: CI never blesses; unset NANOLOAD_BLESS"
        )),
        (None, Some(b)) => Ok(b == "1"),
    }
}

/// [`bless_from`] of this process's environment (a value that is not
/// UTF-8 is read lossily).
pub fn bless() -> Result<bool, String> {
    let var = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    bless_from(var("CI").as_deref(), var("NANOLOAD_BLESS").as_deref())
}
