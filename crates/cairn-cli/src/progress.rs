//! Progress on stderr: bars on a terminal; elsewhere (an agent, CI, a pipe),
//! where indicatif draws nothing, a plain line when a stage begins, every
//! `CAIRN_PROGRESS_SECS` seconds (default 10) while it runs, and when it
//! ends. `-q` shows none of it.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// Draws one bar per stage, or writes plain lines.
pub struct Bars {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
    /// Plain lines instead of bars (stderr is no terminal).
    lines: Option<Mutex<Lines>>,
}

/// The stage that plain lines report on.
struct Lines {
    every: Duration,
    name: String,
    total: Option<u64>,
    done: u64,
    started: Instant,
    last: Instant,
}

impl Lines {
    fn say(&self, what: &str) {
        let secs = self.started.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            self.done as f64 / secs
        } else {
            0.0
        };
        let of = match self.total {
            Some(t) if t > 0 => format!(
                "{}/{t} ({:.0}%)",
                self.done,
                100.0 * self.done as f64 / t as f64
            ),
            _ => self.done.to_string(),
        };
        // A closed stderr (`cairn index 2>&1 | head`) must not end the
        // pass: a progress line that cannot be written is dropped.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "cairn: {} {what}{of}, {:.0} s, {rate:.1}/s",
            self.name,
            secs
        );
    }
}

/// A bar's rate: one decimal (`150.5/s`; indicatif's `{per_sec}` gives four).
fn rate_text(per_sec: f64) -> String {
    if per_sec.is_finite() {
        format!("{per_sec:.1}/s")
    } else {
        "-/s".into()
    }
}

/// A stage is this far along before its bar shows an ETA…
const ETA_AFTER: Duration = Duration::from_secs(5);
/// …and this share of it done (or `ETA_ANYWAY` gone by): the first
/// batches (a model loading, a cold cache) are slower than the rest, and
/// an ETA from them said `54m` for a two-minute pass.
const ETA_DONE_SHARE: f64 = 0.05;
const ETA_ANYWAY: Duration = Duration::from_secs(30);

/// `, ETA 2m` once the rate is stable ([`ETA_AFTER`], [`ETA_DONE_SHARE`]),
/// else nothing.
fn eta_text(pos: u64, len: u64, elapsed: Duration, eta: Duration) -> String {
    let share = if len == 0 {
        0.0
    } else {
        pos as f64 / len as f64
    };
    let stable = elapsed >= ETA_AFTER && (share >= ETA_DONE_SHARE || elapsed >= ETA_ANYWAY);
    if stable && pos < len {
        format!(", ETA {:#}", HumanDuration(eta))
    } else {
        String::new()
    }
}

impl Bars {
    pub fn new(quiet: bool) -> Bars {
        let every = std::env::var("CAIRN_PROGRESS_SECS")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::from_secs(10), Duration::from_secs_f64);
        let plain = !quiet && !std::io::stderr().is_terminal();
        Bars {
            quiet,
            bar: Mutex::new(None),
            lines: plain.then(|| {
                Mutex::new(Lines {
                    every,
                    name: String::new(),
                    total: None,
                    done: 0,
                    started: Instant::now(),
                    last: Instant::now(),
                })
            }),
        }
    }

    fn start(&self, name: &str, total: Option<u64>) {
        if let Some(lines) = &self.lines {
            let mut l = cairn_core::sync::lock(lines);
            l.name = name.to_string();
            l.total = total;
            l.done = 0;
            l.started = Instant::now();
            l.last = Instant::now();
            l.say("started: ");
            return;
        }
        let target = if self.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = match total {
            Some(t) if t > 0 => {
                let b = ProgressBar::with_draw_target(Some(t), target);
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>12} [{bar:30}] {pos}/{len} ({rate}{eta}) {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&rate_text(s.per_sec()));
                    })
                    .with_key("eta", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let (pos, len) = (s.pos(), s.len().unwrap_or(0));
                        let _ = w.write_str(&eta_text(pos, len, s.elapsed(), s.eta()));
                    })
                    .progress_chars("=> "),
                );
                b
            }
            _ => {
                let b = ProgressBar::with_draw_target(None, target);
                b.set_style(
                    ProgressStyle::with_template("{prefix:>12} {spinner} {pos} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                b
            }
        };
        bar.set_prefix(name.to_string());
        if let Some(old) = cairn_core::sync::lock(&self.bar).replace(bar) {
            old.finish_and_clear();
        }
    }

    fn end(&self) {
        if let Some(lines) = &self.lines {
            let l = cairn_core::sync::lock(lines);
            if !l.name.is_empty() {
                l.say("done: ");
            }
            return;
        }
        if let Some(b) = cairn_core::sync::lock(&self.bar).take() {
            b.finish_and_clear();
        }
    }

    fn advance_by(&self, n: u64) {
        if let Some(lines) = &self.lines {
            let mut l = cairn_core::sync::lock(lines);
            l.done += n;
            if l.last.elapsed() >= l.every {
                l.last = Instant::now();
                l.say("");
            }
            return;
        }
        if let Some(b) = cairn_core::sync::lock(&self.bar).as_ref() {
            b.inc(n);
        }
    }

    /// Whether `-q` was given: no progress, and no summary.
    pub fn quiet(&self) -> bool {
        self.quiet
    }
}

impl cairn::Progress for Bars {
    fn stage(&self, name: &str, total: u64) {
        self.start(name, Some(total));
    }
    fn inc(&self, n: u64) {
        self.advance_by(n);
    }
    fn finish(&self) {
        self.end();
    }
}

impl cairn_embed::FetchProgress for Bars {
    /// Shown even when quiet: a first fetch takes a while and a user
    /// should know why.
    fn note(&self, message: &str) {
        tell!("{message}");
    }
    fn begin(&self, what: &str, total: Option<u64>) {
        self.start("fetching", total);
        if let Some(b) = cairn_core::sync::lock(&self.bar).as_ref() {
            b.set_message(what.to_string());
            if total.is_some() {
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>12} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}) {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
            }
        }
    }
    fn advance(&self, n: u64) {
        cairn::Progress::inc(self, n);
    }
    fn end(&self) {
        Bars::end(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_has_one_decimal() {
        assert_eq!(rate_text(150.477_4), "150.5/s");
        assert_eq!(rate_text(0.0), "0.0/s");
        assert_eq!(rate_text(f64::NAN), "-/s");
    }

    #[test]
    fn no_eta_until_the_rate_is_stable() {
        let s = Duration::from_secs;
        // Two seconds in, 1% done: an ETA from the first batches is noise.
        assert_eq!(eta_text(30, 3000, s(2), s(54 * 60)), "");
        // Five seconds in but 1% done: still not.
        assert_eq!(eta_text(30, 3000, s(6), s(54 * 60)), "");
        assert_eq!(eta_text(300, 3000, s(12), s(108)), ", ETA 2m");
        // A long stage shows one after half a minute however far it is.
        assert_eq!(eta_text(10, 100_000, s(31), s(3 * 3600)), ", ETA 3h");
        assert_eq!(eta_text(3000, 3000, s(60), s(0)), "");
    }
}
