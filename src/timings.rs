//! Wall time of each phase of a run, in order, for `--timings` (stderr) and
//! the summary. No I/O.
//!
//! ```text
//! timings (s):
//!   discover                                 0.004   0.2%
//!   extract                              1.210  61.0%
//!   stage                                0.030   1.5%
//!   load                                 0.120   6.0%
//!   sql kinds                            0.002   0.1%
//!   sql V001__session_identity           0.010   0.5%
//!   …
//!   write                                0.400  20.2%
//!   total                                1.983
//! ```

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Phases and their wall times, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timings {
    pub phases: Vec<(String, Duration)>,
    /// The whole run's wall time (set when it ends).
    pub total: Duration,
}

impl Timings {
    /// Run `f`, recording its wall time as `phase`.
    pub fn time<T>(&mut self, phase: &str, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let v = f();
        self.phases.push((phase.to_string(), started.elapsed()));
        v
    }

    /// Append the phases of a part of the run (extraction, the SQL steps).
    pub fn extend(&mut self, other: Timings) {
        self.phases.extend(other.phases);
    }

    /// The `--timings` block: each phase's seconds and share of the total.
    pub fn render(&self) -> String {
        let total = self.total;
        let mut s = String::from("timings (s):\n");
        let all = total.as_secs_f64().max(f64::MIN_POSITIVE);
        for (phase, d) in &self.phases {
            let _ = writeln!(
                s,
                "  {phase:<40} {:>9.3} {:>5.1}%",
                d.as_secs_f64(),
                100.0 * d.as_secs_f64() / all
            );
        }
        let _ = write!(s, "  {:<40} {:>9.3}", "total", total.as_secs_f64());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_render_in_order_with_their_share() {
        let t = Timings {
            phases: vec![
                ("discover".into(), Duration::from_millis(250)),
                ("write".into(), Duration::from_millis(750)),
            ],
            total: Duration::from_secs(1),
        };
        assert_eq!(
            t.render(),
            format!(
                "timings (s):\n  {:<40} {:>9} {:>6}\n  {:<40} {:>9} {:>6}\n  {:<40} {:>9}",
                "discover", "0.250", "25.0%", "write", "0.750", "75.0%", "total", "1.000"
            )
        );
    }
}
