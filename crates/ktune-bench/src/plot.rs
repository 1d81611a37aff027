//! Convergence plots: best value so far relative to the optimum against evaluations, one line
//! per (tool, strategy) (mean over its runs) plus the random-search baseline `B(n)`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::score::best_so_far_raw;
use crate::{BenchError, Direction, SpaceStats, Trace};

const SIZE: (u32, u32) = (1200, 750);
const FONT: &str = "sans-serif";

/// Distinguishable line colours (Tableau 10).
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];

/// Registers the bundled DejaVu Sans as the `sans-serif` family, once per process.
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font; a second registration merely replaces the first.
        let _ = plotters::style::register_font(
            FONT,
            FontStyle::Normal,
            include_bytes!("../assets/DejaVuSans.ttf"),
        );
    });
}

/// What is drawn: one curve per series, `y[n - 1]` for `n = 1..=horizon`.
struct PlotData {
    title: String,
    y_label: String,
    log_y: bool,
    horizon: usize,
    n_max: usize,
    series: Vec<(String, Vec<f64>)>,
    baseline: Vec<f64>,
}

/// Convergence plot of one space: best value relative to the optimum (best(n)/opt for Minimize,
/// opt/best(n) for Maximize, i.e. >= 1, on a log axis) against evaluations n = 1..budget, mean
/// over runs per (tool, strategy), and the random baseline B(n). Writes `<dir>/<space>.png` and
/// `<dir>/<space>.svg`, creating `dir`.
///
/// Each line is the mean over runs of `best(n)`, then taken relative to the optimum, like `B(n)`
/// (an expected best value): random search then lies on the baseline, as its score of 0 says (a
/// mean of ratios would put it above). A grey dashed line marks `n_max`, where the score stops.
/// Traces of other spaces are skipped. `best(n)` follows the score's conventions (the median
/// before the first valid value; a run that stopped keeps its final best). When the space has
/// values `<= 0` a ratio means nothing, and the plot shows `|best(n) - opt|` on a linear axis
/// instead. Characters other than ASCII letters, digits, `.`, `-` and `_` in the space's name are
/// replaced by `_` in the file names.
///
/// # Errors
/// [`BenchError::Io`] when `dir` cannot be created, [`BenchError::Plot`] when drawing or writing
/// an image fails.
pub fn plot_convergence(
    stats: &SpaceStats,
    traces: &[&Trace],
    dir: &Path,
) -> Result<(PathBuf, PathBuf), BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    let data = plot_data(stats, traces);
    let stem: String = stats
        .name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    register_font();
    let plot_err = |path: &Path, message: String| BenchError::Plot {
        path: path.to_path_buf(),
        message,
    };
    draw(BitMapBackend::new(&png, SIZE).into_drawing_area(), &data)
        .map_err(|m| plot_err(&png, m))?;
    draw(SVGBackend::new(&svg, SIZE).into_drawing_area(), &data).map_err(|m| plot_err(&svg, m))?;
    Ok((png, svg))
}

fn plot_data(stats: &SpaceStats, traces: &[&Trace]) -> PlotData {
    let horizon = stats.budget().max(1);
    let opt = stats.optimum();
    let positive = min_raw(stats) > 0.0;
    let rel = |best: f64| -> f64 {
        if positive {
            match stats.direction() {
                Direction::Minimize => best / opt,
                Direction::Maximize => opt / best,
            }
        } else {
            (best - opt).abs()
        }
    };
    let mut groups: BTreeMap<(&str, &str), Vec<&Trace>> = BTreeMap::new();
    for t in traces.iter().filter(|t| t.space == stats.name()) {
        groups.entry((&t.tool, &t.strategy)).or_default().push(t);
    }
    let series = groups
        .into_iter()
        .map(|((tool, strategy), runs)| {
            let mut sum = vec![0.0; horizon];
            for t in &runs {
                for (s, b) in sum
                    .iter_mut()
                    .zip(best_so_far_raw(stats, &t.values, horizon))
                {
                    *s += b;
                }
            }
            let k = runs.len() as f64;
            let label = format!("{tool}/{strategy} ({} runs)", runs.len());
            (label, sum.into_iter().map(|s| rel(s / k)).collect())
        })
        .collect();
    let baseline = (1..=horizon).map(|n| rel(stats.baseline(n))).collect();
    let y_label = match (positive, stats.direction()) {
        (true, Direction::Minimize) => "best so far / optimum (mean over runs)",
        (true, Direction::Maximize) => "optimum / best so far (mean over runs)",
        (false, _) => "|best so far - optimum| (mean over runs)",
    };
    PlotData {
        title: format!(
            "{}: convergence (N = {}, valid = {}, n_max = {})",
            stats.name(),
            stats.n_total(),
            stats.n_valid(),
            stats.n_max()
        ),
        y_label: y_label.to_string(),
        log_y: positive,
        horizon,
        n_max: stats.n_max(),
        series,
        baseline,
    }
}

/// The smallest valid raw value of the space.
fn min_raw(stats: &SpaceStats) -> f64 {
    match stats.direction() {
        Direction::Minimize => stats.optimum(),
        Direction::Maximize => stats.raw(stats.worst_min()),
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, d: &PlotData) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let curves = d.series.iter().map(|(_, y)| y).chain([&d.baseline]);
    let y_max = curves
        .flat_map(|y| y.iter().copied())
        .filter(|y| y.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let x_range = 1..d.horizon.max(2);
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(&d.title, (FONT, 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85);
    if d.log_y {
        let top = (y_max * 1.05).max(1.01);
        let mut chart = builder
            .build_cartesian_2d(x_range, (1.0..top).log_scale())
            .map_err(e)?;
        let label = |y: &f64| {
            if *y >= 10.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.2}")
            }
        };
        curves_on(&mut chart, d, (1.0, top), Some(&label)).map_err(e)?;
    } else {
        let top = if y_max > 0.0 { y_max * 1.05 } else { 1.0 };
        let mut chart = builder.build_cartesian_2d(x_range, 0.0..top).map_err(e)?;
        curves_on(&mut chart, d, (0.0, top), None).map_err(e)?;
    }
    root.present().map_err(e)
}

/// The axes (the y labels written by `y_label` where given), the curves and the legend on
/// a chart whose y axis spans `bottom..top`.
fn curves_on<'a, DB, Y>(
    chart: &mut Chart<'a, DB, Y>,
    d: &PlotData,
    (bottom, top): (f64, f64),
    y_label: Option<&dyn Fn(&f64) -> String>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("evaluations n")
        .y_desc(&d.y_label)
        .label_style((FONT, 17))
        .axis_desc_style((FONT, 19));
    if let Some(y_label) = y_label {
        mesh.y_label_formatter(y_label);
    }
    mesh.draw()?;
    let style = |i: usize| COLOURS[i % COLOURS.len()].stroke_width(2);
    let n_max = d.n_max.min(d.horizon) as f64;
    draw_series(chart, d, &style, (bottom, top), n_max)?;
    legend(chart)
}

type Chart<'a, DB, Y> =
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordusize, Y>>;

fn draw_series<DB, Y>(
    chart: &mut Chart<'_, DB, Y>,
    d: &PlotData,
    style: &dyn Fn(usize) -> ShapeStyle,
    (bottom, top): (f64, f64),
    n_max: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    let points = |y: &[f64]| -> Vec<(usize, f64)> {
        y.iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, &v)| (i + 1, v))
            .collect()
    };
    let grey = RGBColor(110, 110, 110);
    chart
        .draw_series(DashedLineSeries::new(
            [(n_max as usize, bottom), (n_max as usize, top)],
            4,
            4,
            grey.stroke_width(2),
        ))?
        .label(format!("n_max = {}", d.n_max))
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], grey.stroke_width(2)));
    chart
        .draw_series(DashedLineSeries::new(
            points(&d.baseline),
            8,
            5,
            BLACK.stroke_width(2),
        ))?
        .label("random search B(n)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 24, y)], BLACK.stroke_width(2)));
    for (i, (label, y)) in d.series.iter().enumerate() {
        let s = style(i);
        chart
            .draw_series(LineSeries::new(points(y), s))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], s));
    }
    Ok(())
}

fn legend<'a, DB, Y>(
    chart: &mut Chart<'a, DB, Y>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 17))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_curves() {
        let values: Vec<Option<f64>> = (1..=300).map(|i| Some(i as f64)).collect();
        let st = SpaceStats::new("s", &values, Direction::Minimize).unwrap();
        let t = Trace {
            tool: "k".into(),
            strategy: "x".into(),
            space: "s".into(),
            seed: 0,
            values: vec![Some(4.0), Some(2.0)],
            wall_seconds: 1.0,
            points: Vec::new(),
            meta: None,
        };
        let other = Trace {
            space: "elsewhere".into(),
            ..t.clone()
        };
        let d = plot_data(&st, &[&t, &other]);
        assert!(d.log_y);
        assert_eq!(d.series.len(), 1);
        assert_eq!(&d.series[0].1[..3], &[4.0, 2.0, 2.0]);
        assert_eq!(d.horizon, 220);
        assert!((d.baseline[0] - 150.5).abs() < 1e-9);

        let gflops: Vec<Option<f64>> = (1..=300).map(|i| Some(i as f64)).collect();
        let st = SpaceStats::new("g", &gflops, Direction::Maximize).unwrap();
        let d = plot_data(
            &st,
            &[&Trace {
                space: "g".into(),
                ..t.clone()
            }],
        );
        assert!(d.log_y);
        assert_eq!(d.series[0].1[1], 75.0); // 300 / max(4, 2)
        assert!(d.baseline.iter().all(|&b| b >= 1.0));

        let signed: Vec<Option<f64>> = (0..300).map(|i| Some(i as f64 - 100.0)).collect();
        let st = SpaceStats::new("n", &signed, Direction::Minimize).unwrap();
        assert!(!plot_data(&st, &[]).log_y);
    }
}
