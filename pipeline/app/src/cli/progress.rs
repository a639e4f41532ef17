//! Progress bars on stderr for long work, with the rate and the time left. Drawn only when
//! stderr is a terminal (indicatif hides them otherwise), so a log file or a pipe gets no
//! carriage returns and no bar; dropped, a bar clears its line.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `what` counted in `unit`s; its length is set by the first [`Progress::set`].
    pub fn new(what: &str, unit: &str) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        let template = format!(
            "{what} {{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{elapsed}}, {{eta}} left)"
        );
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress { bar }
    }

    /// A spinner for work of unknown length, showing the current phase.
    pub fn phases(what: &str) -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template(&format!("{what}: {{spinner}} {{msg}} ({{elapsed}})"))
        {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Progress { bar }
    }

    /// `done` of `total` units.
    pub fn set(&self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }

    /// The text beside the bar: the current day, file or phase.
    pub fn message(&self, text: impl Into<String>) {
        self.bar.set_message(text.into());
    }

    /// `done` of `total` finished, working on `item` (a day, a run, a file) now.
    pub fn item(&self, done: usize, total: usize, item: impl std::fmt::Display) {
        self.message(item.to_string());
        self.set(done, total);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
