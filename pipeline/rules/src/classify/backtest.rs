//! `jobsight rules backtest`: before a site switches a changed rule set on, run the current and
//! the candidate book over stored history and show which jobs (and users) the candidate would
//! flag that the current one does not, and the reverse, rule by rule. Reads the warehouse, writes
//! nothing; the [`Backtest`] it returns is rendered for people by the render crate
//! (`jobsight_render::rules`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::NaiveDate;
use serde::Serialize;

use super::{ClassifyError, input};
use crate as rules;
use crate::{RuleBook, lang::Value};

/// One finding present under one book and not the other.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Change {
    pub day: NaiveDate,
    pub job_id: String,
    pub user: String,
    pub rule: String,
    pub node: Option<String>,
}

/// Per rule: findings under each book and the differences.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RuleDiff {
    pub rule: String,
    pub current: usize,
    pub candidate: usize,
    pub only_current: usize,
    pub only_candidate: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Backtest {
    pub days: usize,
    pub jobs: usize,
    pub current_version: String,
    pub candidate_version: String,
    pub rules: Vec<RuleDiff>,
    pub only_candidate: Vec<Change>,
    pub only_current: Vec<Change>,
    pub users_only_candidate: BTreeSet<String>,
    pub users_only_current: BTreeSet<String>,
}

/// Runs both books over `days`; `progress(day, i, n)` after each day.
pub fn run(
    data: &Path,
    days: &[NaiveDate],
    current: &RuleBook,
    candidate: &RuleBook,
    settings: &rules::Settings,
    progress: impl Fn(NaiveDate, usize, usize),
) -> Result<Backtest, ClassifyError> {
    let mut out = Backtest {
        current_version: current.version.clone(),
        candidate_version: candidate.version.clone(),
        ..Backtest::default()
    };
    let mut per_rule: BTreeMap<String, RuleDiff> = BTreeMap::new();
    for (i, &day) in days.iter().enumerate() {
        let mut jobs = input::read_day(data, day, None, None)?;
        super::history::attach_or_warn(data, day, &mut jobs, settings);
        for mut job in jobs {
            rules::prepare(&mut job, settings);
            let user = match job.job.get("user") {
                Some(Value::Str(u)) => u.clone(),
                _ => String::new(),
            };
            let keys = |book: &RuleBook| -> BTreeSet<(String, Option<String>)> {
                rules::evaluate(book, &job, settings)
                    .findings
                    .into_iter()
                    .map(|f| (f.rule, f.node))
                    .collect()
            };
            let (a, b) = (keys(current), keys(candidate));
            for (rule, _) in &a {
                per_rule.entry(rule.clone()).or_default().current += 1;
            }
            for (rule, _) in &b {
                per_rule.entry(rule.clone()).or_default().candidate += 1;
            }
            let change = |(rule, node): &(String, Option<String>)| Change {
                day,
                job_id: job.job_id.clone(),
                user: user.clone(),
                rule: rule.clone(),
                node: node.clone(),
            };
            for key in a.difference(&b) {
                per_rule.entry(key.0.clone()).or_default().only_current += 1;
                out.users_only_current.insert(user.clone());
                out.only_current.push(change(key));
            }
            for key in b.difference(&a) {
                per_rule.entry(key.0.clone()).or_default().only_candidate += 1;
                out.users_only_candidate.insert(user.clone());
                out.only_candidate.push(change(key));
            }
            out.jobs += 1;
        }
        out.days += 1;
        progress(day, i + 1, days.len());
    }
    out.rules = per_rule
        .into_iter()
        .map(|(rule, diff)| RuleDiff { rule, ..diff })
        .collect();
    Ok(out)
}
