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

    /// How many periods `jobsight summary` shows when no `--from` is given: enough rows to see a
    /// trend, few enough to read in a terminal.
    pub fn default_count(self) -> u32 {
        match self {
            Period::Day => 14,
            Period::Week => 8,
            Period::Month => 12,
        }
    }

    /// The first day of the last [`Self::default_count`] whole periods up to the one holding
    /// `to`: the last 14 days, the last 8 weeks from a Monday, the last 12 months from a 1st.
    pub fn default_from(self, to: NaiveDate) -> NaiveDate {
        let back = self.default_count() - 1;
        let start = self.start_of(to);
        match self {
            Period::Day => start - Duration::days(i64::from(back)),
            Period::Week => start - Duration::weeks(i64::from(back)),
            Period::Month => start
                .checked_sub_months(chrono::Months::new(back))
                .unwrap_or(start),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// With no `--from`, the window follows the period: 14 days, 8 weeks from a Monday, 12 months
    /// from a 1st, each ending with the period that holds `--to`.
    #[test]
    fn the_default_window_follows_the_period() {
        let to = NaiveDate::from_ymd_opt(2026, 11, 25).unwrap(); // a Wednesday
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(Period::Day.default_from(to), day(2026, 11, 12));
        assert_eq!(Period::Week.default_from(to), day(2026, 10, 5));
        assert_eq!(
            Period::Week.default_from(to).weekday(),
            chrono::Weekday::Mon
        );
        assert_eq!(Period::Month.default_from(to), day(2025, 12, 1));
        let january = day(2026, 1, 31);
        assert_eq!(Period::Month.default_from(january), day(2025, 2, 1));
    }
}
