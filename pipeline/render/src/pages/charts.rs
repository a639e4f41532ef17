//! The report pages' charts: inline SVG drawn with `plotters` (its SVG backend only, no fonts
//! loaded, nothing fetched), so a page is one self-contained file that works on an air-gapped
//! cluster. Pure functions: data in, an SVG string out.
//!
//! Every text that reaches a chart (node names, metric names, labels) is cleaned of control
//! characters here; plotters escapes `<`, `>`, `&` and quotes itself. The pages insert the SVG
//! unescaped, which is why nothing else may build it.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use jobsight_base::text::clean;
use jobsight_base::units;

const WIDTH: u32 = 640;
const HEIGHT: u32 = 220;
/// Lines drawn one per node up to this many nodes; beyond, the band across nodes.
pub const MAX_NODE_LINES: usize = 8;

/// Colours of node lines, distinguishable and printable.
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
];
const REFERENCE: RGBColor = RGBColor(120, 120, 120);
const ANOMALOUS: RGBColor = RGBColor(214, 39, 40);

/// What one metric of one job looked like over its run.
#[derive(Debug, Clone, Default)]
pub struct MetricChart {
    /// The metric's name as the warehouse writes it (`job_mem_bytes`), or a family's with its
    /// numbers dropped (`cpu_core_util`): the title, in words, and the unit of the value axis
    /// (`512 MB`, `80 MB/s`), read from the name as everywhere else.
    pub title: String,
    /// Said after the title, e.g. what a band across a family's series is.
    pub note: String,
    /// One line per node: (node, points as (hours since start, value)).
    pub nodes: Vec<(String, Vec<(f64, f64)>)>,
    /// Across nodes, when there are too many to draw one by one: (hours, min, median, max).
    pub band: Vec<(f64, f64, f64, f64)>,
    /// A healthy run to compare with: (what it is, points as (hours, value)).
    pub reference_run: Option<(String, Vec<(f64, f64)>)>,
    /// The cluster's healthy range of this metric's job mean: (what it is, low, high).
    pub reference_band: Option<(String, f64, f64)>,
    /// Spans (hours since start) that a rule or a model found anomalous.
    pub anomalous: Vec<(f64, f64)>,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart {title:?}: {reason}")]
pub struct ChartError {
    pub title: String,
    pub reason: String,
}

fn failed(title: &str) -> impl Fn(String) -> ChartError + '_ {
    move |reason| ChartError {
        title: title.to_string(),
        reason,
    }
}

/// The y range that shows every value drawn, with a little room, never empty.
fn y_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    // Most metrics are rates or sizes: start at zero unless the values are negative.
    let lo = lo.min(0.0);
    let span = (hi - lo).max(hi.abs() * 0.1).max(1e-9);
    (lo, hi + span * 0.08)
}

/// A line chart's frame: white ground, caption, room for the axes' labels, the ranges.
type LineChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn line_frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Result<LineChart<'a, 'b>, String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    ChartBuilder::on(root)
        .caption(title, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(32)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)
        .map_err(|e| e.to_string())
}

/// A metric's chart: the job's nodes (or their band), the healthy reference and the anomalous
/// spans, over hours since the job's start.
pub fn metric_chart(chart: &MetricChart) -> Result<String, ChartError> {
    let words = jobsight_base::plain::metric_name(&chart.title);
    let title = clean(
        &if chart.note.is_empty() {
            words
        } else {
            format!("{words}: {}", chart.note)
        },
        100,
    );
    let err = failed(&title);
    let xs = chart
        .nodes
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(x, _)| *x))
        .chain(chart.band.iter().map(|b| b.0))
        .chain(
            chart
                .reference_run
                .iter()
                .flat_map(|(_, p)| p.iter().map(|(x, _)| *x)),
        )
        .chain(chart.anomalous.iter().flat_map(|(a, b)| [*a, *b]))
        .filter(|x| x.is_finite());
    let x_max = xs.fold(0.0_f64, f64::max).max(1.0 / 60.0);
    let ys = chart
        .nodes
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, y)| *y))
        .chain(chart.band.iter().flat_map(|b| [b.1, b.3]))
        .chain(
            chart
                .reference_run
                .iter()
                .flat_map(|(_, p)| p.iter().map(|(_, y)| *y)),
        )
        .chain(
            chart
                .reference_band
                .iter()
                .flat_map(|(_, lo, hi)| [*lo, *hi]),
        );
    let (y0, y1) = y_range(ys);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let mut c = line_frame(&root, &title, 0.0..x_max, y0..y1).map_err(&err)?;
        let in_minutes = x_max < 2.0;
        let x_fmt = |x: &f64| {
            if in_minutes {
                format!("{:.0}", x * 60.0)
            } else {
                format!("{x:.1}")
            }
        };
        let y_fmt = |y: &f64| units::named_value(&chart.title, *y);
        c.configure_mesh()
            .x_desc(if in_minutes {
                "minutes since start"
            } else {
                "hours since start"
            })
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_labels(8)
            .y_labels(5)
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| err(e.to_string()))?;
        for (a, b) in &chart.anomalous {
            c.draw_series(std::iter::once(Rectangle::new(
                [(*a, y0), (*b, y1)],
                ANOMALOUS.mix(0.12).filled(),
            )))
            .map_err(|e| err(e.to_string()))?;
        }
        if let Some((label, lo, hi)) = &chart.reference_band {
            c.draw_series(std::iter::once(Rectangle::new(
                [(0.0, *lo), (x_max, *hi)],
                REFERENCE.mix(0.15).filled(),
            )))
            .map_err(|e| err(e.to_string()))?
            .label(clean(label, 60))
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 4), (x + 14, y + 4)], REFERENCE.mix(0.3).filled())
            });
        }
        if let Some((label, points)) = &chart.reference_run {
            c.draw_series(DashedLineSeries::new(
                points.iter().copied(),
                5,
                4,
                REFERENCE.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(clean(label, 60))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], REFERENCE.stroke_width(2)));
        }
        if !chart.band.is_empty() {
            let mut outline: Vec<(f64, f64)> = chart.band.iter().map(|b| (b.0, b.3)).collect();
            outline.extend(chart.band.iter().rev().map(|b| (b.0, b.1)));
            c.draw_series(std::iter::once(Polygon::new(
                outline,
                PALETTE[0].mix(0.2).filled(),
            )))
            .map_err(|e| err(e.to_string()))?
            .label("min to max across nodes")
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 4), (x + 14, y + 4)], PALETTE[0].mix(0.3).filled())
            });
            c.draw_series(LineSeries::new(
                chart.band.iter().map(|b| (b.0, b.2)),
                PALETTE[0].stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label("median node")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], PALETTE[0].stroke_width(2)));
        }
        for (i, (node, points)) in chart.nodes.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            c.draw_series(LineSeries::new(
                points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(clean(node, 40))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], colour.stroke_width(2)));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .label_font(("sans-serif", 11))
            .draw()
            .map_err(|e| err(e.to_string()))?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// One bar of a bar chart: label, value, and whether it is bad (drawn red).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub bad: bool,
}

/// Horizontal bars, one per label, largest scale first: the daily report's efficiency by
/// partition and waste by account.
pub fn bar_chart(title: &str, unit: &str, bars: &[Bar]) -> Result<String, ChartError> {
    let title = clean(title, 80);
    let err = failed(&title);
    let max = bars
        .iter()
        .map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max)
        .max(1e-9)
        * 1.1;
    let n = bars.len().max(1);
    let height = (60 + 22 * n as u32).min(900);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let labels: Vec<String> = bars.iter().map(|b| clean(&b.label, 24)).collect();
        let mut c = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 15))
            .margin(6)
            .x_label_area_size(30)
            .y_label_area_size(150)
            .build_cartesian_2d(0.0..max, (0..n).into_segmented())
            .map_err(|e| err(e.to_string()))?;
        let x_fmt = |x: &f64| short_number(*x);
        // Bar i is drawn in row n - 1 - i, so the first bar is at the top.
        let y_fmt = |y: &SegmentValue<usize>| match y {
            SegmentValue::CenterOf(row) if *row < n => {
                labels.get(n - 1 - row).cloned().unwrap_or_default()
            }
            _ => String::new(),
        };
        c.configure_mesh()
            .disable_y_mesh()
            .x_desc(unit)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_labels(n)
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| err(e.to_string()))?;
        c.draw_series(bars.iter().enumerate().map(|(i, b)| {
            let colour = if b.bad { ANOMALOUS } else { PALETTE[0] };
            let value = if b.value.is_finite() { b.value } else { 0.0 };
            let row = n - 1 - i;
            let mut r = Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(row)),
                    (value, SegmentValue::Exact(row + 1)),
                ],
                colour.mix(0.75).filled(),
            );
            r.set_margin(3, 3, 0, 0);
            r
        }))
        .map_err(|e| err(e.to_string()))?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// One task of a workflow run's Gantt chart: its times in seconds since the run's start.
#[derive(Debug, Clone, Default)]
pub struct GanttTask {
    pub ready: Option<f64>,
    pub submit: Option<f64>,
    pub start: Option<f64>,
    pub finish: Option<f64>,
    pub end: Option<f64>,
    /// Its score flagged it (drawn with a red mark at the left edge).
    pub flagged: bool,
    /// On the run's critical path (drawn outlined in black, and joined by a line).
    pub critical: bool,
}

/// The phases of a task, as the PEARC 2021 figures colour them: (name, colour).
pub const GANTT_PHASES: [(&str, RGBColor); 4] = [
    ("waiting (ready → submitted)", RGBColor(200, 200, 200)),
    ("queued (submitted → executing)", RGBColor(245, 166, 35)),
    ("executing", RGBColor(31, 119, 180)),
    ("staging out, post script", RGBColor(44, 160, 44)),
];

/// A workflow run's Gantt chart: one row per task in the given order (the first at the top),
/// each phase a bar, flagged tasks marked red at the left, the critical path outlined and
/// joined. Time in minutes since the run's start.
pub fn gantt_chart(title: &str, tasks: &[GanttTask]) -> Result<String, ChartError> {
    let title = clean(title, 80);
    let err = failed(&title);
    let n = tasks.len().max(1);
    let last = tasks
        .iter()
        .flat_map(|t| [t.ready, t.submit, t.start, t.finish, t.end])
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max)
        / 60.0;
    let x_max = (last * 1.02).max(1.0);
    // Rows of 2 to 10 pixels: a workflow of a thousand tasks still fits a page.
    let row_px = (700 / n as u32).clamp(2, 10);
    let height = 70 + row_px * n as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let mut c = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 15))
            .margin(6)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(0.0..x_max, 0.0..n as f64)
            .map_err(|e| err(e.to_string()))?;
        c.configure_mesh()
            .disable_y_mesh()
            .x_desc("minutes since the run's first task was ready")
            .y_desc("tasks")
            .y_labels(0)
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| err(e.to_string()))?;
        // Row i spans [n - 1 - i, n - i) on the y axis, so the first task is at the top.
        let row = |i: usize| (n - 1 - i) as f64;
        let minutes = |v: Option<f64>| v.filter(|v| v.is_finite()).map(|v| v / 60.0);
        let mut bars = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            let times = [t.ready, t.submit, t.start, t.finish, t.end].map(minutes);
            for (phase, (_, colour)) in GANTT_PHASES.iter().enumerate() {
                if let (Some(a), Some(b)) = (times[phase], times[phase + 1])
                    && b > a
                {
                    bars.push(Rectangle::new(
                        [(a, row(i) + 0.1), (b, row(i) + 0.9)],
                        colour.filled(),
                    ));
                }
            }
            if t.critical
                && let (Some(a), Some(b)) = (times[2].or(times[0]), times[4].or(times[3]))
            {
                bars.push(Rectangle::new(
                    [(a, row(i) + 0.05), (b, row(i) + 0.95)],
                    BLACK.stroke_width(1),
                ));
            }
            if t.flagged {
                bars.push(Rectangle::new(
                    [(0.0, row(i)), (x_max * 0.008, row(i) + 1.0)],
                    ANOMALOUS.filled(),
                ));
            }
        }
        c.draw_series(bars).map_err(|e| err(e.to_string()))?;
        // The critical path, joined from each task's start to the next one's (in time order).
        let mut path: Vec<(f64, f64)> = tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.critical)
            .filter_map(|(i, t)| Some((minutes(t.start.or(t.ready))?, row(i) + 0.5)))
            .collect();
        path.sort_by(|a, b| a.0.total_cmp(&b.0));
        if path.len() > 1 {
            c.draw_series(std::iter::once(PathElement::new(
                path,
                BLACK.stroke_width(1),
            )))
            .map_err(|e| err(e.to_string()))?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// A value per day as a line with points: a user's efficiency over their recent days.
pub fn trend_chart(
    title: &str,
    unit: &str,
    days: &[String],
    values: &[Option<f64>],
) -> Result<String, ChartError> {
    let title = clean(title, 80);
    let err = failed(&title);
    let n = days.len().max(1);
    let (y0, y1) = y_range(values.iter().flatten().copied().chain([1.0]));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let mut c = line_frame(&root, &title, -0.5..(n as f64 - 0.5), y0..y1).map_err(&err)?;
        let x_fmt = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                days.get(i as usize)
                    .map(|d| d.get(5..).unwrap_or(d).to_string())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        let y_fmt = |y: &f64| short_number(*y);
        c.configure_mesh()
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_labels(n.min(14))
            .y_desc(unit)
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| err(e.to_string()))?;
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i as f64, v)))
            .collect();
        c.draw_series(LineSeries::new(
            points.iter().copied(),
            PALETTE[0].stroke_width(2),
        ))
        .map_err(|e| err(e.to_string()))?;
        c.draw_series(
            points
                .iter()
                .map(|p| Circle::new(*p, 3, PALETTE[0].filled())),
        )
        .map_err(|e| err(e.to_string()))?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// A number in at most four significant figures with an SI suffix: axis labels stay short.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if scaled.abs() >= 100.0 || scaled == scaled.trunc() {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{scaled:.digits$}{suffix}")
}

/// The mean across nodes of one metric, bin by bin.
pub fn mean_across(series: &jobsight_report::load::Series, metric: &str) -> Vec<(f64, f64)> {
    let mut bins: std::collections::BTreeMap<i64, (f64, f64, usize)> =
        std::collections::BTreeMap::new();
    for m in series.values() {
        for (x, y) in m.get(metric).into_iter().flatten() {
            let e = bins.entry((x * 1e6) as i64).or_insert((*x, 0.0, 0));
            e.1 += y;
            e.2 += 1;
        }
    }
    bins.values().map(|(x, s, n)| (*x, s / *n as f64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gantt_chart_draws_phases_flags_and_the_critical_path() {
        let task = |ready: f64, flagged: bool, critical: bool| GanttTask {
            ready: Some(ready),
            submit: Some(ready + 10.0),
            start: Some(ready + 60.0),
            finish: Some(ready + 600.0),
            end: Some(ready + 660.0),
            flagged,
            critical,
        };
        let svg = gantt_chart(
            "run <1>",
            &[
                task(0.0, false, true),
                task(30.0, true, false),
                task(700.0, false, true),
            ],
        )
        .unwrap();
        assert!(svg.contains("run &lt;1&gt;"), "the title is escaped");
        // Three tasks × four phases, two critical outlines, one flag: 15 rectangles beyond the
        // frame's (which a chart without tasks has too: no task is no error).
        let frame = gantt_chart("empty", &[]).unwrap().matches("<rect").count();
        assert_eq!(svg.matches("<rect").count() - frame, 15, "{svg}");
        assert!(svg.contains("<polyline"), "the critical path is joined");
    }

    #[test]
    fn a_hostile_node_name_is_escaped_in_the_svg() {
        let chart = MetricChart {
            title: "cpu <b>".into(),
            nodes: vec![(
                "<script>alert(1)</script>\u{7}".into(),
                vec![(0.0, 1.0), (0.5, 2.0)],
            )],
            anomalous: vec![(0.1, 0.2)],
            reference_band: Some(("healthy jobs".into(), 0.5, 1.5)),
            ..Default::default()
        };
        let svg = metric_chart(&chart).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        assert!(!svg.contains('\u{7}'));
    }

    #[test]
    fn the_value_axis_is_in_the_metrics_unit() {
        let gib = 1024.0 * 1024.0 * 1024.0;
        let memory = MetricChart {
            title: "job_mem_bytes".into(),
            nodes: vec![("n1".into(), vec![(0.0, 0.5 * gib), (1.0, 3.0 * gib)])],
            ..Default::default()
        };
        let svg = metric_chart(&memory).unwrap();
        assert!(svg.contains(" GB"), "{svg}");
        assert!(
            svg.contains("Job memory") && !svg.contains("job_mem_bytes"),
            "{svg}"
        );
        let rate = MetricChart {
            title: "net_rx_bytes_per_s".into(),
            nodes: vec![("n1".into(), vec![(0.0, 0.0), (1.0, 80e6)])],
            ..Default::default()
        };
        assert!(metric_chart(&rate).unwrap().contains(" MB/s"));
    }

    #[test]
    fn empty_data_still_draws() {
        assert!(metric_chart(&MetricChart::default()).is_ok());
        assert!(bar_chart("none", "h", &[]).is_ok());
        assert!(trend_chart("none", "", &[], &[]).is_ok());
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(12.5), "12.5");
        assert_eq!(short_number(2_500_000.0), "2.50M");
        assert_eq!(short_number(-15000.0), "-15k");
        assert_eq!(short_number(12_345.0), "12.3k");
    }
}
