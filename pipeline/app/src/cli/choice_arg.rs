//! Command-line arguments whose value is one of a [`Choice`]'s names: the stages declare their
//! closed sets of values without depending on clap, and this turns any of them into a value
//! parser with the names, their one-line help (listed by `--help`) and clap's usual error for
//! a value that is not one of them.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use jobsight_base::choice::Choice;

/// The value parser of an argument that takes one of `T`'s names:
/// `#[arg(long, value_parser = choice::<Period>(), default_value = "week")]`.
pub fn choice<T: Choice + Send + Sync>() -> impl TypedValueParser<Value = T> {
    let values = T::ALL.iter().map(|n| {
        let value = PossibleValue::new(n.name);
        if n.help.is_empty() {
            value
        } else {
            value.help(n.help)
        }
    });
    PossibleValuesParser::new(values).try_map(|name| {
        // The parser above has already refused every other name.
        T::from_name(&name).ok_or_else(|| format!("{name} is not one of the possible values"))
    })
}
