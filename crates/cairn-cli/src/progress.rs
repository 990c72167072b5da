//! Progress bars on stderr (indicatif hides them when stderr is not a terminal).

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Draws one bar per stage.
pub struct Bars {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new(quiet: bool) -> Bars {
        Bars {
            quiet,
            bar: Mutex::new(None),
        }
    }

    fn start(&self, name: &str, total: Option<u64>) {
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
                        "{prefix:>12} [{bar:30}] {pos}/{len} ({per_sec}, ETA {eta}) {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
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
        if let Some(old) = self
            .bar
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(bar)
        {
            old.finish_and_clear();
        }
    }

    fn end(&self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}

impl cairn::Progress for Bars {
    fn stage(&self, name: &str, total: u64) {
        self.start(name, Some(total));
    }
    fn inc(&self, n: u64) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            b.inc(n);
        }
    }
    fn finish(&self) {
        self.end();
    }
}

impl cairn_embed::FetchProgress for Bars {
    fn begin(&self, what: &str, total: Option<u64>) {
        self.start("fetching", total);
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
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
