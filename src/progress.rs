//! `--progress`: what a run is doing, drawn on stderr while it runs and
//! cleared before the summary (docs/design.md "Progress and summary").
//!
//! ```text
//! nanoload  1s extract  [#########>----------] 9 stores discovered; 4/9 read, 1.20 MiB/2.40 MiB, 12345 rows
//! nanoload  2s sql      [######>-------------] 6/20 V005__tz_offsets
//! nanoload  3s write    / 7 files
//! ```
//! The pipeline only counts (atomics, added once per store and once per
//! staged batch) and announces phases. With `engine`, a drawing thread
//! samples the counters ten times a second; a phase change (a SQL step
//! starting) is drawn at once. Nothing here reads or writes an output.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How progress is shown (`--progress`, resolved by the CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Show {
    /// Not at all (the default of the library).
    #[default]
    Off,
    /// Without colours (`NO_COLOR`).
    Plain,
    Color,
}

/// The phase a run is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    Discover,
    Extract,
    Stage,
    Load,
    /// Step `step` (0-based) of `steps` is running.
    Sql {
        step: usize,
        steps: usize,
        name: String,
    },
    /// Writing `files` outputs.
    Write {
        files: usize,
    },
}

/// The line drawn for the current state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The phase's name (`extract`, `sql`, …).
    pub prefix: &'static str,
    /// `(position, length)` when the phase has a bar.
    pub bar: Option<(u64, u64)>,
    pub message: String,
}

#[derive(Debug, Default)]
struct Counters {
    stores: AtomicU64,
    stores_read: AtomicU64,
    bytes: AtomicU64,
    bytes_read: AtomicU64,
    rows: AtomicU64,
}

#[derive(Debug)]
struct Shared {
    counters: Counters,
    phase: Mutex<Phase>,
}

impl Shared {
    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn frame(&self, phase: &Phase) -> Frame {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let c = &self.counters;
        match phase {
            Phase::Discover => Frame {
                prefix: "discover",
                bar: None,
                message: "looking for stores".into(),
            },
            Phase::Extract => Frame {
                prefix: "extract",
                bar: Some((n(&c.bytes_read), n(&c.bytes))),
                message: format!(
                    "{} stores discovered; {}/{} read, {}/{}, {} rows",
                    n(&c.stores),
                    n(&c.stores_read),
                    n(&c.stores),
                    human_bytes(n(&c.bytes_read)),
                    human_bytes(n(&c.bytes)),
                    n(&c.rows)
                ),
            },
            Phase::Stage => Frame {
                prefix: "stage",
                bar: None,
                message: format!("{} rows", n(&c.rows)),
            },
            Phase::Load => Frame {
                prefix: "load",
                bar: None,
                message: format!("{} rows", n(&c.rows)),
            },
            Phase::Sql { step, steps, name } => Frame {
                prefix: "sql",
                bar: Some((*step as u64, *steps as u64)),
                message: format!("{}/{steps} {name}", step + 1),
            },
            Phase::Write { files } => Frame {
                prefix: "write",
                bar: None,
                message: format!("{files} file{}", if *files == 1 { "" } else { "s" }),
            },
        }
    }
}

/// A run's progress: counters the pipeline adds to, and (with `engine` and
/// [`Show`] not `Off`) the line on stderr. Dropping it clears the line.
pub struct Progress {
    shared: Arc<Shared>,
    #[cfg(feature = "engine")]
    view: Option<view::View>,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::hidden()
    }
}

impl Progress {
    /// Counters only; nothing is drawn.
    pub fn hidden() -> Progress {
        Progress {
            shared: Arc::new(Shared {
                counters: Counters::default(),
                phase: Mutex::new(Phase::Discover),
            }),
            #[cfg(feature = "engine")]
            view: None,
        }
    }

    /// Start drawing on stderr (unless `show` is `Off`).
    #[cfg(feature = "engine")]
    pub fn start(show: Show) -> Progress {
        let mut p = Progress::hidden();
        p.view = view::View::start(show, &p.shared);
        p
    }

    /// The line for the current state.
    pub fn frame(&self) -> Frame {
        let phase = self.shared.phase();
        self.shared.frame(&phase)
    }

    /// Extraction starts: `stores` discovered, `bytes` in all.
    pub fn extracting(&self, stores: u64, bytes: u64) {
        let c = &self.shared.counters;
        c.stores.store(stores, Ordering::Relaxed);
        c.bytes.store(bytes, Ordering::Relaxed);
        self.enter(Phase::Extract);
    }

    /// Rows staged so far by a store being read (one call per batch).
    pub fn rows(&self, n: u64) {
        self.shared.counters.rows.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes of a store being read, as they are read (a SQLite copy, a
    /// line reader's position).
    pub fn bytes_read(&self, n: u64) {
        self.shared
            .counters
            .bytes_read
            .fetch_add(n, Ordering::Relaxed);
    }

    /// A store was read: its `bytes` and `rows` in all, of which
    /// `counted_bytes` were already added by [`Progress::bytes_read`] and
    /// `counted` by [`Progress::rows`].
    pub fn store_read(&self, bytes: u64, rows: u64, counted: u64, counted_bytes: u64) {
        let c = &self.shared.counters;
        c.rows
            .fetch_add(rows.wrapping_sub(counted), Ordering::Relaxed);
        c.bytes_read
            .fetch_add(bytes.saturating_sub(counted_bytes), Ordering::Relaxed);
        c.stores_read.fetch_add(1, Ordering::Relaxed);
    }

    /// The staged files are being finished.
    pub fn staging(&self) {
        self.enter(Phase::Stage);
    }

    /// The engine loads the staged files.
    pub fn loading(&self) {
        self.enter(Phase::Load);
    }

    /// SQL step `step` (0-based) of `steps`, `name`, starts.
    pub fn sql_step(&self, step: usize, steps: usize, name: &str) {
        self.enter(Phase::Sql {
            step,
            steps,
            name: name.to_string(),
        });
    }

    /// The outputs are written (`files` of them).
    pub fn writing(&self, files: usize) {
        self.enter(Phase::Write { files });
    }

    /// Print one line on stderr above the progress line (which is drawn
    /// again below it).
    pub fn warn(&self, line: &str) {
        #[cfg(feature = "engine")]
        if let Some(v) = &self.view {
            v.suspend(|| eprintln!("{line}"));
            return;
        }
        eprintln!("{line}");
    }

    /// Draw the phase that ends as it ends (its last counts), then the next.
    fn enter(&self, next: Phase) {
        let mut phase = self.shared.phase();
        #[cfg(feature = "engine")]
        if let Some(v) = &self.view {
            v.draw(&self.shared, &phase, false);
        }
        *phase = next;
        #[cfg(feature = "engine")]
        if let Some(v) = &self.view {
            v.draw(&self.shared, &phase, true);
        }
    }
}

/// Bytes in binary units with two decimals (`1.20 MiB`), bytes as such.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {}", UNITS[unit])
}

#[cfg(feature = "engine")]
mod view {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::JoinHandle;
    use std::time::Duration;

    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

    use super::{Phase, Shared, Show};

    /// How often the counters are sampled.
    const TICK: Duration = Duration::from_millis(100);

    /// The bar on stderr and its two styles.
    #[derive(Clone)]
    struct Painter {
        bar: ProgressBar,
        with_bar: ProgressStyle,
        spinner: ProgressStyle,
    }

    impl Painter {
        fn new(color: bool) -> Painter {
            let (prefix, bar) = if color {
                ("{prefix:<8.cyan.bold}", "{bar:20.cyan/blue}")
            } else {
                ("{prefix:<8}", "{bar:20}")
            };
            let style = |t: String| {
                ProgressStyle::with_template(&t)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("#>-")
                    .tick_chars("|/-\\ ")
            };
            // Drawn even when stderr is not a terminal (`always`). The
            // ticker and the phase changes draw (force_draw); the setters'
            // own draws are held to one a second. One line, cut to the
            // terminal's width ({wide_msg}).
            let target = ProgressDrawTarget::term_like_with_hz(
                Box::new(console::Term::buffered_stderr()),
                1,
            );
            Painter {
                bar: ProgressBar::with_draw_target(None, target),
                with_bar: style(format!(
                    "nanoload {{elapsed:>3}} {prefix} [{bar}] {{wide_msg}}"
                )),
                spinner: style(format!(
                    "nanoload {{elapsed:>3}} {prefix} {{spinner}} {{wide_msg}}"
                )),
            }
        }

        /// Draw the current state; `changed`: the phase just changed.
        fn draw(&self, shared: &Shared, phase: &Phase, changed: bool) {
            let f = shared.frame(phase);
            if changed {
                // (set_style does not draw)
                self.bar.set_style(match f.bar {
                    Some(_) => self.with_bar.clone(),
                    None => self.spinner.clone(),
                });
            }
            self.bar.set_prefix(f.prefix);
            self.bar.set_message(f.message);
            let (pos, len) = f.bar.unwrap_or((0, 1));
            // one update for both; it also turns the spinner
            self.bar.update(|s| {
                s.set_len(len.max(1));
                s.set_pos(pos);
            });
            self.bar.force_draw();
        }
    }

    /// The drawn progress: the painter and the thread sampling the counters.
    pub struct View {
        painter: Painter,
        stop: Arc<AtomicBool>,
        ticker: Option<JoinHandle<()>>,
    }

    impl View {
        pub fn start(show: Show, shared: &Arc<Shared>) -> Option<View> {
            let color = match show {
                Show::Off => return None,
                Show::Plain => false,
                Show::Color => true,
            };
            console::set_colors_enabled(color);
            console::set_colors_enabled_stderr(color);
            let painter = Painter::new(color);
            painter.draw(shared, &shared.phase(), true);
            let stop = Arc::new(AtomicBool::new(false));
            let ticker = {
                let (painter, shared, stop) = (painter.clone(), shared.clone(), stop.clone());
                std::thread::Builder::new()
                    .name("nanoload-progress".into())
                    .spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            {
                                let phase = shared.phase();
                                painter.draw(&shared, &phase, false);
                            }
                            std::thread::park_timeout(TICK);
                        }
                    })
                    .ok()
            };
            Some(View {
                painter,
                stop,
                ticker,
            })
        }

        /// Draw the current state; `changed`: the phase just changed.
        pub fn draw(&self, shared: &Shared, phase: &Phase, changed: bool) {
            self.painter.draw(shared, phase, changed);
        }

        /// Run `f` with the line cleared, then draw it again.
        pub fn suspend(&self, f: impl FnOnce()) {
            self.painter.bar.suspend(f);
        }
    }

    impl Drop for View {
        /// Stop the ticker and clear the line.
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(ticker) = self.ticker.take() {
                ticker.thread().unpark();
                let _ = ticker.join();
            }
            self.painter.bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.00 KiB");
        assert_eq!(human_bytes(1258291), "1.20 MiB");
        assert_eq!(human_bytes(3 << 30), "3.00 GiB");
    }

    /// The counters add up whatever order the stores finish in: rows
    /// counted per batch are not counted again when the store ends, and a
    /// store staged from the cache (no batches) adds its rows at its end.
    #[test]
    fn frames_count_stores_bytes_rows_and_steps() {
        let p = Progress::hidden();
        assert_eq!(p.frame().prefix, "discover");
        p.extracting(3, 3 << 20);
        p.rows(4096);
        p.rows(100);
        // bytes count as they are read, before their store ends
        p.bytes_read(1 << 19);
        assert_eq!(
            p.frame().message,
            "3 stores discovered; 0/3 read, 512.00 KiB/3.00 MiB, 4196 rows"
        );
        p.store_read(1 << 20, 4196, 4196, 1 << 19);
        p.store_read(1 << 20, 7, 0, 0);
        assert_eq!(
            p.frame(),
            Frame {
                prefix: "extract",
                bar: Some((2 << 20, 3 << 20)),
                message: "3 stores discovered; 2/3 read, 2.00 MiB/3.00 MiB, 4203 rows".into(),
            }
        );
        p.staging();
        assert_eq!(p.frame().message, "4203 rows");
        p.sql_step(4, 19, "V004__deduped_session_copies");
        assert_eq!(
            p.frame(),
            Frame {
                prefix: "sql",
                bar: Some((4, 19)),
                message: "5/19 V004__deduped_session_copies".into(),
            }
        );
        p.writing(7);
        assert_eq!(p.frame().message, "7 files");
        p.writing(1);
        assert_eq!(p.frame().message, "1 file");
    }
}
