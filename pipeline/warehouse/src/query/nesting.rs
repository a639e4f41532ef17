//! Property test of the bounds a statement meets before it is planned ([`super::budget`],
//! [`super::depth`], [`super::expansion`]): random nestings of every kind of expression and
//! query, from shallow to far past the parser's and jobsight's limits, are each answered or
//! refused within a deadline. Round two's hang was one kind (`CAST(` × 48) that no test nested;
//! here every kind is nested with every other, in random orders.

use std::time::Duration;

use proptest::prelude::*;

/// One level of nesting around an inner expression `{}`.
const KINDS: &[&str] = &[
    "CAST({} AS BIGINT)",
    "TRY_CAST({} AS VARCHAR)",
    "({})::BIGINT",
    "abs({})",
    "coalesce({}, 1)",
    "nullif({}, 2)",
    "CASE WHEN {} IS NULL THEN 0 ELSE 1 END",
    "({})",
    "-({})",
    "NOT ({} = 1)",
    "{} + 1",
    "({} || 'x')",
    "{} IN (1, 2, 3)",
    "(SELECT {})",
    "EXISTS (SELECT {})",
    "[{}]",
    "length(CAST({} AS VARCHAR))",
    "upper(CAST({} AS VARCHAR))",
    "greatest({}, 0)",
    "{} BETWEEN 0 AND 9",
    "({} AND true)",
    "array_length([{}])",
    "(SELECT x FROM (SELECT {} AS x) t)",
    "(WITH w AS (SELECT {} AS x) SELECT x FROM w)",
];

/// How long one statement may take to be answered or refused, in this debug build, on a machine
/// that runs other tests beside it.
const DEADLINE: Duration = Duration::from_secs(20);

fn statement(levels: &[usize]) -> String {
    let expression = levels.iter().fold("1".to_string(), |inner, &kind| {
        KINDS[kind].replace("{}", &inner)
    });
    format!("SELECT {expression} AS v")
}

/// What became of a statement.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Refused by a bound before planning.
    Refused,
    /// Refused for another reason (the parser's own recursion limit, a type error).
    Error,
    /// Planned down to its physical plan, as the server's planner thread plans it.
    Planned,
}

/// The bounds' verdict, then, for a statement they pass, DataFusion's plan down to the physical
/// plan. The property is the time this takes; the answers are counted to show that every path
/// is taken.
fn answer(sql: &str) -> Answer {
    match super::check_read_only(sql) {
        Err(super::QueryError::TooComplex(_)) => return Answer::Refused,
        Err(_) => return Answer::Error,
        Ok(_) => {}
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Answer::Error;
    };
    runtime.block_on(async {
        let ctx = datafusion::prelude::SessionContext::new();
        match ctx.sql(sql).await {
            Ok(frame) => match frame.create_physical_plan().await {
                Ok(_) => Answer::Planned,
                Err(_) => Answer::Error,
            },
            Err(_) => Answer::Error,
        }
    })
}

/// [`answer`] on a thread with room for deep statements, or `None` when it takes longer than
/// [`DEADLINE`] (the thread is left to end by itself).
fn answer_in_time(sql: &str) -> Option<Answer> {
    let (done, finished) = std::sync::mpsc::channel();
    let text = sql.to_owned();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = done.send(answer(&text));
        })
        .unwrap();
    finished.recv_timeout(DEADLINE).ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_nesting_is_answered_or_refused_in_time(
        levels in proptest::collection::vec(0..KINDS.len(), 1..160)
    ) {
        let sql = statement(&levels);
        prop_assert!(
            answer_in_time(&sql).is_some(),
            "not answered within {DEADLINE:?}: {sql}"
        );
    }
}

/// The same kinds, each nested alone to depths around the parser's recursion limit (50) and the
/// budget's: the shape of round two's hang.
#[test]
fn each_kind_nested_alone_is_answered_or_refused_in_time() {
    let mut seen = Vec::new();
    for (kind, form) in KINDS.iter().enumerate() {
        for depth in [30, 47, 48, 49, 60, 200] {
            let answered = answer_in_time(&statement(&vec![kind; depth]));
            let Some(answered) = answered else {
                panic!("{form} × {depth} not answered within {DEADLINE:?}");
            };
            seen.push(answered);
        }
    }
    // Every path is taken: shallow nestings are planned, deep ones refused by the bounds or the
    // parser.
    for path in [Answer::Planned, Answer::Refused, Answer::Error] {
        assert!(seen.contains(&path), "no statement was {path:?}");
    }
}
