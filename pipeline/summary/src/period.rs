//! What a summary's row is for: its period (a day, an ISO week, a month) and its grouping (a
//! cluster, or a partition, account or user within it, or all four).

use chrono::{Datelike, Duration, NaiveDate};
use jobsight_base::choice::{Choice, Named};

/// The length of a summary's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Day,
    Week,
    Month,
}

impl Choice for Period {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Period::Day,
            name: "day",
            help: "",
        },
        Named {
            value: Period::Week,
            name: "week",
            help: "",
        },
        Named {
            value: Period::Month,
            name: "month",
            help: "",
        },
    ];
}

impl Period {
    pub fn name(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    /// The first day of the period that holds `day` (weeks start on Monday, ISO 8601).
    pub fn start_of(self, day: NaiveDate) -> NaiveDate {
        match self {
            Period::Day => day,
            Period::Week => day - Duration::days(i64::from(day.weekday().num_days_from_monday())),
            Period::Month => day.with_day(1).unwrap_or(day),
        }
    }
}

/// What one row is for: a cluster, or a partition, account or user within its cluster, or (the
/// `summaries` table) all four at once. Keys left out show as `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    Cluster,
    Partition,
    Account,
    User,
    All,
}

impl Choice for Grouping {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Grouping::Cluster,
            name: "cluster",
            help: "",
        },
        Named {
            value: Grouping::Partition,
            name: "partition",
            help: "",
        },
        Named {
            value: Grouping::Account,
            name: "account",
            help: "",
        },
        Named {
            value: Grouping::User,
            name: "user",
            help: "",
        },
        Named {
            value: Grouping::All,
            name: "all",
            help: "",
        },
    ];
}

impl Grouping {
    /// Whether the partition, the account and the user are kept.
    pub(crate) fn keeps(self) -> [bool; 3] {
        match self {
            Grouping::Cluster => [false, false, false],
            Grouping::Partition => [true, false, false],
            Grouping::Account => [false, true, false],
            Grouping::User => [false, false, true],
            Grouping::All => [true, true, true],
        }
    }

    /// The name of the one key column it adds to the cluster, if one.
    pub fn column(self) -> Option<&'static str> {
        match self {
            Grouping::Partition => Some("partition"),
            Grouping::Account => Some("account"),
            Grouping::User => Some("user"),
            Grouping::Cluster | Grouping::All => None,
        }
    }
}
