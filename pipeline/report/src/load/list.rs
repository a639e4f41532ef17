//! The served job list: the jobs of a span of days that a person may see, filtered by user,
//! account, partition, state, verdict and finding, sorted by any listed column, bounded. Who
//! may see what is the caller's to say ([`Visible`]); this module only turns it into SQL, with
//! every value a quoted literal.

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;

use super::sql::{each_row, text};
use jobsight_warehouse::query::{QueryError, literal};

/// Whose jobs a list may hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Visible {
    /// Everyone's (an admin).
    All,
    /// `user`'s own and those of `accounts` (which they coordinate).
    Own { user: String, accounts: Vec<String> },
}

/// What a list's columns are sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    #[default]
    End,
    JobId,
    User,
    Account,
    Partition,
    State,
    Elapsed,
    CpuEff,
    MemEff,
    Findings,
    CoreHours,
    Name,
    Verdict,
}

impl SortBy {
    pub const ALL: [(&'static str, SortBy); 13] = [
        ("end", SortBy::End),
        ("job", SortBy::JobId),
        ("user", SortBy::User),
        ("account", SortBy::Account),
        ("partition", SortBy::Partition),
        ("state", SortBy::State),
        ("elapsed", SortBy::Elapsed),
        ("cpu", SortBy::CpuEff),
        ("memory", SortBy::MemEff),
        ("findings", SortBy::Findings),
        ("core_hours", SortBy::CoreHours),
        ("name", SortBy::Name),
        ("verdict", SortBy::Verdict),
    ];

    pub fn parse(name: &str) -> Option<SortBy> {
        SortBy::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
    }

    pub fn name(self) -> &'static str {
        SortBy::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("end", |(n, _)| n)
    }

    fn column(self) -> &'static str {
        match self {
            SortBy::End => "j.\"end\"",
            SortBy::JobId => "j.job_id",
            SortBy::User => "j.\"user\"",
            SortBy::Account => "j.account",
            SortBy::Partition => "j.\"partition\"",
            SortBy::State => "j.state",
            SortBy::Elapsed => "j.elapsed_s",
            SortBy::CpuEff => "s.cpu_eff",
            SortBy::MemEff => "s.mem_eff",
            SortBy::Findings => "findings",
            SortBy::CoreHours => "j.core_hours",
            SortBy::Name => "j.name",
            SortBy::Verdict => "p.verdict",
        }
    }
}

/// A list's filters. Empty strings filter nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct JobQuery {
    pub visible: Visible,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub state: String,
    /// The verdict (`healthy`, an anomaly class) or `flagged` (any finding or verdict but healthy).
    pub verdict: String,
    /// A rule id that fired on the job.
    pub finding: String,
    pub sort: SortBy,
    pub descending: bool,
    pub limit: usize,
}

/// One job of a list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListedJob {
    pub cluster: String,
    pub job_id: String,
    pub day: String,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub name: String,
    pub state: String,
    pub elapsed_s: Option<i64>,
    pub core_hours: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub mem_eff: Option<f64>,
    pub findings: i64,
    pub verdict: Option<String>,
}

/// The `WHERE` conditions of `q` on `jobs j` (the findings and verdict filters on `x` and `p`).
fn conditions(q: &JobQuery) -> Vec<String> {
    let mut out = vec![format!("j.day >= '{}' AND j.day <= '{}'", q.from, q.to)];
    match &q.visible {
        Visible::All => {}
        Visible::Own { user, accounts } => {
            let mut own = vec![format!("j.\"user\" = {}", literal(user))];
            if !accounts.is_empty() {
                let list: Vec<String> = accounts.iter().map(|a| literal(a)).collect();
                own.push(format!("lower(j.account) IN ({})", list.join(", ")));
            }
            out.push(format!("({})", own.join(" OR ")));
        }
    }
    for (column, value) in [
        ("j.\"user\"", &q.user),
        ("j.account", &q.account),
        ("j.\"partition\"", &q.partition),
    ] {
        if !value.is_empty() {
            out.push(format!("{column} = {}", literal(value)));
        }
    }
    if !q.state.is_empty() {
        // States as Slurm words them ("CANCELLED by 1000"): the first word.
        out.push(format!(
            "upper(split_part(j.state, ' ', 1)) = {}",
            literal(&q.state.to_ascii_uppercase())
        ));
    }
    match q.verdict.as_str() {
        "" => {}
        "flagged" => out.push(
            "(coalesce(x.n, 0) > 0 OR coalesce(p.verdict, 'healthy') <> 'healthy')".to_string(),
        ),
        v => out.push(format!("p.verdict = {}", literal(v))),
    }
    if !q.finding.is_empty() {
        out.push(format!(
            "EXISTS (SELECT 1 FROM findings f WHERE {} AND f.rule = {})",
            jobsight_warehouse::catalog::same_run("f", "j"),
            literal(&q.finding)
        ));
    }
    out
}

/// The jobs of `q`, at most `q.limit`, and whether there were more.
pub async fn list(
    ctx: &SessionContext,
    q: &JobQuery,
) -> Result<(Vec<ListedJob>, bool), QueryError> {
    let range = format!("day >= '{}' AND day <= '{}'", q.from, q.to);
    let order = if q.descending { "DESC" } else { "ASC" };
    let (same, same_x, same_p) = (
        jobsight_warehouse::catalog::same_run("s", "j"),
        jobsight_warehouse::catalog::same_run("x", "j"),
        jobsight_warehouse::catalog::same_run("p", "j"),
    );
    let sql = format!(
        "SELECT j.cluster, j.job_id, CAST(j.day AS VARCHAR) AS day, j.\"user\", j.account, \
         j.\"partition\", j.name, j.state, j.elapsed_s, j.core_hours, s.cpu_eff, s.mem_eff, \
         coalesce(x.n, 0) AS findings, p.verdict \
         FROM jobs j LEFT JOIN job_summary s ON {same} AND s.judgeable \
         LEFT JOIN (SELECT job_id, day, restart_count, count(*) AS n FROM findings WHERE {range} GROUP BY 1, 2, 3) x \
           ON {same_x} \
         LEFT JOIN (SELECT job_id, day, restart_count, \
             coalesce(max(CASE WHEN verdict <> 'healthy' THEN verdict END), max(verdict)) AS verdict \
             FROM predictions WHERE {range} GROUP BY 1, 2, 3) p ON {same_p} \
         WHERE {} ORDER BY {} {order} NULLS LAST, j.\"end\" DESC, j.job_id LIMIT {}",
        conditions(q).join(" AND "),
        q.sort.column(),
        q.limit + 1
    );
    let mut jobs = Vec::new();
    each_row(ctx, &sql, |c, i| {
        jobs.push(ListedJob {
            cluster: text(c, "cluster", i),
            job_id: text(c, "job_id", i),
            day: text(c, "day", i),
            user: text(c, "user", i),
            account: text(c, "account", i),
            partition: text(c, "partition", i),
            name: text(c, "name", i),
            state: text(c, "state", i),
            elapsed_s: c.int("elapsed_s", i),
            core_hours: c.float("core_hours", i),
            cpu_eff: c.float("cpu_eff", i),
            mem_eff: c.float("mem_eff", i),
            findings: c.int("findings", i).unwrap_or(0),
            verdict: c.text("verdict", i),
        });
    })
    .await?;
    let more = jobs.len() > q.limit;
    jobs.truncate(q.limit);
    Ok((jobs, more))
}

/// Who a job belongs to and where it is stored: what deciding whether a person may see it
/// needs, before anything else of it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOwner {
    pub cluster: String,
    pub job_id: String,
    pub user: String,
    pub account: String,
    pub day: NaiveDate,
}

/// The newest record of `job_id` of each cluster.
pub async fn owners(ctx: &SessionContext, job_id: &str) -> Result<Vec<JobOwner>, QueryError> {
    let sql = format!(
        "SELECT cluster, job_id, \"user\", account, CAST(day AS VARCHAR) AS day FROM jobs \
         WHERE job_id = {} ORDER BY day DESC",
        literal(job_id)
    );
    let mut out: Vec<JobOwner> = Vec::new();
    each_row(ctx, &sql, |c, i| {
        let cluster = text(c, "cluster", i);
        let Some(day) = c.text("day", i).and_then(|d| d.parse().ok()) else {
            return;
        };
        if !out.iter().any(|o| o.cluster == cluster) {
            out.push(JobOwner {
                cluster,
                job_id: text(c, "job_id", i),
                user: text(c, "user", i),
                account: text(c, "account", i),
                day,
            });
        }
    })
    .await?;
    Ok(out)
}

/// How people judged each rule's findings from `from` on: (rule, useful, wrong), the rules
/// called wrong most first. Empty when nobody judged any (or the table does not exist yet).
pub async fn rule_feedback(
    ctx: &SessionContext,
    from: NaiveDate,
) -> Result<Vec<(String, i64, i64)>, QueryError> {
    if ctx.table_exist("feedback").ok() != Some(true) {
        return Ok(Vec::new());
    }
    // A person's latest judgement of a finding counts, once.
    let sql = format!(
        "SELECT item, sum(CASE WHEN judgement = 'useful' THEN 1 ELSE 0 END) AS useful, \
         sum(CASE WHEN judgement = 'wrong' THEN 1 ELSE 0 END) AS wrong FROM ( \
           SELECT item, judgement, row_number() OVER (PARTITION BY cluster, job_id, item, by \
             ORDER BY given_at DESC) AS latest FROM feedback \
           WHERE subject = 'finding' AND day >= '{from}') \
         WHERE latest = 1 GROUP BY item ORDER BY wrong DESC, useful DESC, item"
    );
    let mut out = Vec::new();
    each_row(ctx, &sql, |c, i| {
        out.push((
            text(c, "item", i),
            c.int("useful", i).unwrap_or(0),
            c.int("wrong", i).unwrap_or(0),
        ));
    })
    .await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(visible: Visible) -> JobQuery {
        JobQuery {
            visible,
            from: "2026-01-01".parse().unwrap(),
            to: "2026-01-31".parse().unwrap(),
            user: String::new(),
            account: String::new(),
            partition: String::new(),
            state: String::new(),
            verdict: String::new(),
            finding: String::new(),
            sort: SortBy::End,
            descending: true,
            limit: 10,
        }
    }

    #[test]
    fn a_person_lists_their_own_and_their_accounts_jobs_whatever_they_filter() {
        let mut q = query(Visible::Own {
            user: "bob".into(),
            accounts: vec!["physics".into()],
        });
        q.user = "o'hara".into();
        let c = conditions(&q).join(" AND ");
        assert!(
            c.contains("(j.\"user\" = 'bob' OR lower(j.account) IN ('physics'))"),
            "{c}"
        );
        assert!(c.contains("j.\"user\" = 'o''hara'"), "quoted: {c}");
        let all = conditions(&query(Visible::All)).join(" AND ");
        assert!(!all.contains("bob"), "{all}");
    }

    #[test]
    fn sort_names_round_trip() {
        for (name, sort) in SortBy::ALL {
            assert_eq!(SortBy::parse(name), Some(sort));
            assert_eq!(sort.name(), name);
        }
        assert_eq!(SortBy::parse("1; DROP"), None);
    }
}
