//! The accumulators of the `js_` functions: each group's samples collected as they arrive (one
//! push per row), kept as two list columns between partial aggregations, and handed to
//! [`Output::answer`] at the end. DataFusion uses [`SeriesGroups`] on its grouped path and
//! [`SeriesAccumulator`] on the path without groups.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, ListArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, TimestampMicrosecondType};
use datafusion::common::{Result, ScalarValue, internal_err};
use datafusion::logical_expr::{Accumulator, EmitTo, GroupsAccumulator};

use jobsight_base::series::Sample;

use super::output::Output;
use super::{Samples, TIME, paired_lists};

/// The function's arguments as microsecond times (timed functions) and doubles.
fn arguments(timed: bool, columns: &[ArrayRef]) -> Result<(Option<ArrayRef>, ArrayRef)> {
    Ok(if timed {
        (
            Some(cast(&columns[0], &TIME)?),
            cast(&columns[1], &DataType::Float64)?,
        )
    } else {
        (None, cast(&columns[0], &DataType::Float64)?)
    })
}

/// Calls `add(row, sample)` for every row of the arguments that is a sample and passes the
/// aggregate's `FILTER`: a row without a value, or a timed one without a time, is none; an
/// untimed sample is at time 0.
fn each_sample(
    timed: bool,
    columns: &[ArrayRef],
    filter: Option<&BooleanArray>,
    mut add: impl FnMut(usize, Sample),
) -> Result<()> {
    let (times, values) = arguments(timed, columns)?;
    let values = values.as_primitive::<Float64Type>();
    let times = times
        .as_ref()
        .map(|t| t.as_primitive::<TimestampMicrosecondType>());
    if filter.is_none() && values.null_count() == 0 && times.is_none_or(|t| t.null_count() == 0) {
        // The usual batch (no null, no FILTER): straight over the buffers, no check per row.
        match times {
            Some(times) => times
                .values()
                .iter()
                .zip(values.values())
                .enumerate()
                .for_each(|(row, (&t, &v))| add(row, (t, v))),
            None => (values.values().iter().enumerate()).for_each(|(row, &v)| add(row, (0, v))),
        }
        return Ok(());
    }
    for row in 0..values.len() {
        let skipped = values.is_null(row)
            || times.is_some_and(|t| t.is_null(row))
            || filter.is_some_and(|f| !(f.is_valid(row) && f.value(row)));
        if !skipped {
            add(row, (times.map_or(0, |t| t.value(row)), values.value(row)));
        }
    }
    Ok(())
}

/// The state of `groups` as the two list columns of [`super::SeriesFunction::state_fields`].
fn state_lists(groups: &[Samples]) -> Result<Vec<ArrayRef>> {
    let total = groups.iter().map(Vec::len).sum();
    let (mut times, mut values) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for &(t, v) in groups.iter().flatten() {
        times.push(t);
        values.push(v);
    }
    paired_lists(times, values, groups.iter().map(Vec::len))
}

/// Calls `merge(row, samples)` for every row of a state (two list columns).
fn each_state(
    states: &[ArrayRef],
    mut merge: impl FnMut(usize, &mut dyn Iterator<Item = Sample>),
) -> Result<()> {
    let (times, values): (&ListArray, &ListArray) = (states[0].as_list(), states[1].as_list());
    let (time_offsets, value_offsets) = (times.value_offsets(), values.value_offsets());
    let time_values = times.values().as_primitive::<Int64Type>().values();
    let value_values = values.values().as_primitive::<Float64Type>().values();
    for row in 0..times.len() {
        if times.is_null(row) || values.is_null(row) {
            continue;
        }
        let t = &time_values[time_offsets[row] as usize..time_offsets[row + 1] as usize];
        let v = &value_values[value_offsets[row] as usize..value_offsets[row + 1] as usize];
        if t.len() != v.len() {
            return internal_err!(
                "a js_ function's state has {} times for {} values",
                t.len(),
                v.len()
            );
        }
        merge(row, &mut t.iter().copied().zip(v.iter().copied()));
    }
    Ok(())
}

/// One group's accumulator (DataFusion's path without groups, e.g. a whole-table aggregate).
#[derive(Debug)]
pub(super) struct SeriesAccumulator {
    output: Output,
    /// `js_bin_means`' bin width (0 for the others).
    bin_us: i64,
    samples: Samples,
}

impl SeriesAccumulator {
    pub(super) fn new(output: Output, bin_us: i64) -> Self {
        SeriesAccumulator {
            output,
            bin_us,
            samples: Samples::default(),
        }
    }
}

impl Accumulator for SeriesAccumulator {
    fn update_batch(&mut self, columns: &[ArrayRef]) -> Result<()> {
        let samples = &mut self.samples;
        each_sample(self.output.timed(), columns, None, |_, s| samples.push(s))
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let samples = &mut self.samples;
        each_state(states, |_, s| samples.extend(s))
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        state_lists(std::slice::from_ref(&self.samples))?
            .iter()
            .map(|list| ScalarValue::try_from_array(list, 0))
            .collect()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let answer = self
            .output
            .answer(vec![std::mem::take(&mut self.samples)], self.bin_us)?;
        ScalarValue::try_from_array(&answer, 0)
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.samples.capacity() * size_of::<Sample>()
    }
}

/// Every group's samples at once (DataFusion's grouped path: one accumulator for all groups).
#[derive(Debug)]
pub(super) struct SeriesGroups {
    output: Output,
    /// `js_bin_means`' bin width (0 for the others).
    bin_us: i64,
    groups: Vec<Samples>,
    /// Samples held, for [`GroupsAccumulator::size`].
    samples: usize,
}

impl SeriesGroups {
    pub(super) fn new(output: Output, bin_us: i64) -> Self {
        SeriesGroups {
            output,
            bin_us,
            groups: Vec::new(),
            samples: 0,
        }
    }

    /// The groups `emit_to` asks for, taken out.
    fn take(&mut self, emit_to: EmitTo) -> Vec<Samples> {
        let taken = emit_to.take_needed(&mut self.groups);
        self.samples = self.groups.iter().map(Vec::len).sum();
        taken
    }

    /// Makes room for `total_num_groups` groups and returns them with the count of samples.
    fn grown(&mut self, total_num_groups: usize) -> (&mut Vec<Samples>, &mut usize) {
        self.groups.resize_with(total_num_groups, Samples::default);
        (&mut self.groups, &mut self.samples)
    }
}

impl GroupsAccumulator for SeriesGroups {
    fn update_batch(
        &mut self,
        columns: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        let timed = self.output.timed();
        let (groups, samples) = self.grown(total_num_groups);
        each_sample(timed, columns, opt_filter, |row, s| {
            groups[group_indices[row]].push(s);
            *samples += 1;
        })
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let groups = self.take(emit_to);
        self.output.answer(groups, self.bin_us)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        state_lists(&self.take(emit_to))
    }

    fn merge_batch(
        &mut self,
        states: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        let (groups, samples) = self.grown(total_num_groups);
        each_state(states, |row, s| {
            let group = &mut groups[group_indices[row]];
            let before = group.len();
            group.extend(s);
            *samples += group.len() - before;
        })
    }

    fn convert_to_state(
        &self,
        columns: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        // Each row its own group: a list of its one sample, or an empty list.
        let mut rows: Vec<Samples> = vec![Samples::new(); columns[0].len()];
        each_sample(self.output.timed(), columns, opt_filter, |row, s| {
            rows[row].push(s)
        })?;
        state_lists(&rows)
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.groups.capacity() * size_of::<Samples>()
            + self.samples * size_of::<Sample>()
    }
}
