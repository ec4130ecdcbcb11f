//! Wall and CPU time of each phase of a run, in order, for `--timings`
//! (stderr) and the summary. No I/O but the process's own CPU clock
//! (`getrusage`).
//!
//! ```text
//! sql plan: chain=tables join=hash step_threads=one
//! timings (s):
//!   discover                                     0.004   0.2%  cpu     0.004
//!   extract                                      1.210  61.0%  cpu     2.310
//!   stage                                        0.030   1.5%  cpu     0.030
//!   load                                         0.120   6.0%  cpu     0.150
//!   sql kinds                                    0.002   0.1%  cpu     0.002
//!   sql V001__session_identity                   0.010   0.5%  cpu     0.014
//!   …
//!   write                                        0.400  20.2%  cpu     0.780
//!   total                                        1.983         cpu     3.520
//! ```
//! A phase's CPU is the user and system time of every thread of the process
//! while it ran (the extraction's pool, DuckDB's workers, the writer's
//! encoders): on a machine shared with other work it is the figure that
//! stays put when the wall time does not.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// One phase: its name, wall time and the process's CPU time meanwhile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phase {
    pub name: String,
    pub wall: Duration,
    pub cpu: Duration,
}

/// How the SQL steps ran (`steps::Chain`, `steps::PlanJoin`,
/// `steps::StepThreads`, each as its name): what the stage decided, or
/// what a test variable forced. `--timings` and `--summary-json` show it,
/// so a test that forces a mode can see it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlPlan {
    /// `tables` or `views`: the events chain.
    pub chain: &'static str,
    /// `hash` or `sort`: V016's join of the rows to their ordinals.
    pub join: &'static str,
    /// `one` or `all`: the threads of the SQL steps.
    pub step_threads: &'static str,
}

/// Phases in the order they ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timings {
    pub phases: Vec<Phase>,
    /// How the SQL steps ran (set by the engine; the last run's when the
    /// steps ran again at a higher memory limit).
    pub sql_plan: Option<SqlPlan>,
    /// The whole run's wall time (set when it ends).
    pub total: Duration,
    /// The whole run's CPU time, every thread (set when it ends).
    pub total_cpu: Duration,
}

/// A started measurement: the wall clock and the process's CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    wall: Instant,
    cpu: Duration,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            wall: Instant::now(),
            cpu: process_cpu(),
        }
    }

    /// What passed since the start: (wall, CPU).
    pub fn elapsed(&self) -> (Duration, Duration) {
        (self.wall.elapsed(), process_cpu().saturating_sub(self.cpu))
    }

    /// The phase `name` from the start until now.
    pub fn phase(&self, name: impl Into<String>) -> Phase {
        let (wall, cpu) = self.elapsed();
        Phase {
            name: name.into(),
            wall,
            cpu,
        }
    }
}

/// User plus system time of every thread of this process so far (zero
/// where the platform has no `getrusage`).
pub fn process_cpu() -> Duration {
    #[cfg(unix)]
    {
        // SAFETY: getrusage writes one `rusage` into memory we own; the
        // value is read only when it reports success.
        let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) } == 0 {
            let u = unsafe { u.assume_init() };
            let tv = |t: libc::timeval| {
                Duration::from_secs(t.tv_sec.max(0) as u64)
                    + Duration::from_micros(t.tv_usec.max(0) as u64)
            };
            return tv(u.ru_utime) + tv(u.ru_stime);
        }
    }
    Duration::ZERO
}

impl Timings {
    /// Run `f`, recording its wall and CPU time as `phase`.
    pub fn time<T>(&mut self, phase: &str, f: impl FnOnce() -> T) -> T {
        let clock = Clock::start();
        let v = f();
        self.phases.push(clock.phase(phase));
        v
    }

    /// Append the phases of a part of the run (extraction, the SQL steps),
    /// and its SQL plan when it has one.
    pub fn extend(&mut self, other: Timings) {
        self.phases.extend(other.phases);
        self.sql_plan = other.sql_plan.or(self.sql_plan);
    }

    /// The `--timings` block: how the SQL steps ran (when they did), then
    /// each phase's wall seconds, its share of the total wall time and its
    /// CPU seconds.
    pub fn render(&self) -> String {
        let all = self.total.as_secs_f64().max(f64::MIN_POSITIVE);
        let mut s = String::new();
        if let Some(p) = self.sql_plan {
            let _ = writeln!(
                s,
                "sql plan: chain={} join={} step_threads={}",
                p.chain, p.join, p.step_threads
            );
        }
        s.push_str("timings (s):\n");
        for p in &self.phases {
            let _ = writeln!(
                s,
                "  {:<40} {:>9.3} {:>5.1}%  cpu {:>9.3}",
                p.name,
                p.wall.as_secs_f64(),
                100.0 * p.wall.as_secs_f64() / all,
                p.cpu.as_secs_f64()
            );
        }
        let _ = write!(
            s,
            "  {:<40} {:>9.3}         cpu {:>9.3}",
            "total",
            self.total.as_secs_f64(),
            self.total_cpu.as_secs_f64()
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_render_in_order_with_their_share_and_cpu() {
        let phase = |name: &str, wall, cpu| Phase {
            name: name.into(),
            wall: Duration::from_millis(wall),
            cpu: Duration::from_millis(cpu),
        };
        let mut t = Timings {
            phases: vec![phase("discover", 250, 240), phase("write", 750, 1490)],
            total: Duration::from_secs(1),
            total_cpu: Duration::from_millis(1750),
            sql_plan: None,
        };
        assert_eq!(
            t.render(),
            format!(
                "timings (s):\n  {:<40} {:>9} {:>6}  cpu {:>9}\n  {:<40} {:>9} {:>6}  cpu {:>9}\n  {:<40} {:>9}         cpu {:>9}",
                "discover",
                "0.250",
                "25.0%",
                "0.240",
                "write",
                "0.750",
                "75.0%",
                "1.490",
                "total",
                "1.000",
                "1.750"
            )
        );
        // the SQL plan, when the steps ran, on the line before the phases
        t.sql_plan = Some(SqlPlan {
            chain: "views",
            join: "sort",
            step_threads: "all",
        });
        let with_plan = t.render();
        assert_eq!(
            with_plan.lines().take(2).collect::<Vec<_>>(),
            [
                "sql plan: chain=views join=sort step_threads=all",
                "timings (s):"
            ]
        );
    }

    /// The process's CPU clock counts work done on other threads too (the
    /// extraction's pool, DuckDB's workers): a thread that spent 110 ms of
    /// its own CPU inside a phase makes the phase's CPU at least 100 ms
    /// (whatever else the machine ran: the thread's own clock, not the
    /// wall, decides when it stops).
    #[test]
    fn a_phase_counts_the_cpu_of_another_thread() {
        fn thread_cpu() -> Duration {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes one timespec we own
            assert_eq!(
                unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) },
                0
            );
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        }
        let mut t = Timings::default();
        let spun = t.time("another thread", || {
            std::thread::spawn(|| {
                let mut x = 0u64;
                while thread_cpu() < Duration::from_millis(110) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
            .join()
        });
        assert!(spun.is_ok());
        let p = &t.phases[0];
        assert_eq!(p.name, "another thread");
        assert!(p.cpu >= Duration::from_millis(100), "{p:?}");
    }
}
