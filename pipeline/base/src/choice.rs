//! Closed sets of named values a person picks by name: an output format, a summary's period, a
//! telemetry source. A stage declares its set with [`Choice`] (each value's name and a line on
//! what it means) without knowing how it is asked for; the application turns any `Choice` into a
//! command-line argument, so that no crate below it depends on clap.

/// One value of a [`Choice`]: the value, the name a person types, and what it means (one line,
/// shown by `--help`).
#[derive(Debug, Clone, Copy)]
pub struct Named<T: 'static> {
    pub value: T,
    pub name: &'static str,
    pub help: &'static str,
}

/// A type whose every value has a name: [`ALL`](Choice::ALL) lists them in the order `--help`
/// shows them.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    const ALL: &'static [Named<Self>];

    /// The value's name.
    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|n| n.value == self)
            .map_or("", |n| n.name)
    }

    /// The value named `name` (exactly), if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|n| n.name == name).map(|n| n.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        DarkBlue,
    }

    impl Choice for Colour {
        const ALL: &'static [Named<Self>] = &[
            Named {
                value: Colour::Red,
                name: "red",
                help: "",
            },
            Named {
                value: Colour::DarkBlue,
                name: "dark-blue",
                help: "",
            },
        ];
    }

    #[test]
    fn names_go_both_ways() {
        for n in Colour::ALL {
            assert_eq!(n.value.name(), n.name);
            assert_eq!(Colour::from_name(n.name), Some(n.value));
        }
        assert_eq!(Colour::from_name("Red"), None);
        assert_eq!(Colour::from_name(""), None);
    }
}
