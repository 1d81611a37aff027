//! The report's figures, each from the study's rows.

use std::collections::BTreeMap;
use std::fmt::Write;

use ktune_core::Metric;
use ktune_store::{Row, value_display};

use crate::importance::Effect;
use crate::svg::{Axis, Figure, HEIGHT, WIDTH, escape, number};

/// The failure kinds in the order the report shows them, with their CSS class.
pub(crate) const KINDS: [(&str, &str); 5] = [
    ("compile", "f-compile"),
    ("runtime", "f-runtime"),
    ("timeout", "f-timeout"),
    ("wrong_output", "f-wrong"),
    ("invalid", "f-invalid"),
];

/// A configuration as `name=value, ...`.
pub(crate) fn describe(row: &Row) -> String {
    row.params
        .iter()
        .map(|(n, v)| format!("{n}={}", value_display(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `a` is better than `b`.
pub(crate) fn better(a: f64, b: f64, maximize: bool) -> bool {
    if maximize { a > b } else { a < b }
}

/// The successful rows' value, in evaluation order, with the running best's improvements as
/// `(evaluations so far, best)`.
pub(crate) fn improvements<'a>(
    rows: impl IntoIterator<Item = (f64, &'a Row)>,
    maximize: bool,
) -> Vec<(f64, f64)> {
    let mut best: Option<f64> = None;
    let mut out = Vec::new();
    for (x, r) in rows {
        if let Some(v) = ok_value(r)
            && best.is_none_or(|b| better(v, b, maximize))
        {
            best = Some(v);
            out.push((x, v));
        }
    }
    out
}

/// The objective of a successful row.
pub(crate) fn ok_value(r: &Row) -> Option<f64> {
    (r.status == "ok")
        .then_some(r.objective)
        .flatten()
        .filter(|v| v.is_finite())
}

/// Best so far against evaluations, with the default's value and the budget.
pub(crate) fn convergence(
    rows: &[Row],
    maximize: bool,
    label: &str,
    default: Option<f64>,
    budget: Option<usize>,
) -> String {
    let steps = improvements(
        rows.iter().enumerate().map(|(i, r)| ((i + 1) as f64, r)),
        maximize,
    );
    let n = rows.len() as f64;
    // A budget far beyond what ran (a brute force's "no limit") would squash the line.
    let budget = budget.filter(|b| (*b as f64) <= 3.0 * n);
    let end = budget.map_or(n, |b| (b as f64).max(n));
    let x = Axis::linear(0.0, end.max(1.0) * 1.02);
    let y = Axis::fit(steps.iter().map(|p| p.1).chain(default), true);
    let mut f = Figure::new(
        "convergence",
        x,
        y,
        "evaluations",
        &format!("best {label} so far"),
    );
    if let Some(d) = default {
        f.hline(
            "default-line",
            d,
            &format!("the default configuration: {}", number(d)),
        );
        f.legend("default-line", "default configuration");
    }
    if let Some(b) = budget {
        f.vline("budget-line", b as f64, &format!("budget: {b} evaluations"));
        f.legend("budget-line", &format!("budget ({b})"));
    }
    f.steps("best-line", &steps, n, "best so far");
    for (x, v) in &steps {
        f.point(
            "best-step",
            *x,
            *v,
            2.5,
            &format!("evaluation {}: {}", *x as usize, number(*v)),
        );
    }
    f.legend("best-line", "best so far");
    f.finish()
}

/// Best so far against each worker's wall-clock time.
pub(crate) fn wall_time(rows: &[Row], maximize: bool, label: &str) -> Option<String> {
    let mut by_worker: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.clock_s.is_finite()) {
        by_worker
            .entry(r.worker.clone().unwrap_or_else(|| "this machine".into()))
            .or_default()
            .push(r);
    }
    if by_worker.is_empty() || rows.iter().all(|r| r.clock_s <= 0.0) {
        return None;
    }
    // Per worker: its name, its best-so-far steps, and its clock at its last record.
    type Line = (String, Vec<(f64, f64)>, f64);
    let lines: Vec<Line> = by_worker
        .into_iter()
        .map(|(w, mut rs)| {
            rs.sort_by(|a, b| a.clock_s.total_cmp(&b.clock_s));
            let end = rs.last().map_or(0.0, |r| r.clock_s);
            (
                w,
                improvements(rs.into_iter().map(|r| (r.clock_s, r)), maximize),
                end,
            )
        })
        .collect();
    let x = Axis::linear(
        0.0,
        lines.iter().map(|l| l.2).fold(0.0, f64::max).max(1e-3) * 1.02,
    );
    let y = Axis::fit(lines.iter().flat_map(|l| l.1.iter().map(|p| p.1)), true);
    let mut f = Figure::new(
        "wall-time",
        x,
        y,
        "seconds of tuning (each worker's clock)",
        &format!("best {label} so far"),
    );
    for (i, (w, steps, end)) in lines.iter().enumerate() {
        let class = format!("worker-line w{}", i % 8);
        f.steps(&class, steps, *end, &format!("worker {w}"));
        f.legend(&class, &format!("worker {w}"));
    }
    Some(f.finish())
}

/// What the measurements figure drew.
pub(crate) struct Drawn {
    pub html: String,
    pub ok_drawn: usize,
    pub ok_total: usize,
    pub failures_drawn: usize,
    pub failures_total: usize,
}

/// Every measurement against evaluations, failures as marks in bands by kind.
pub(crate) fn measurements(rows: &[Row], maximize: bool, label: &str, max_points: usize) -> Drawn {
    let ok: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| ok_value(r).map(|v| (i, v)))
        .collect();
    let keep = decimate(&ok, maximize, max_points);
    let x = Axis::linear(0.0, rows.len().max(1) as f64 * 1.02);
    let y = Axis::fit(keep.iter().map(|&k| ok[k].1), true);
    let mut f = Figure::new("measurements", x, y, "evaluation", label);
    for &k in &keep {
        let (i, v) = ok[k];
        f.point(
            "pt ok",
            (i + 1) as f64,
            v,
            2.0,
            &format!("#{} {}: {}", i + 1, number(v), describe(&rows[i])),
        );
    }
    if !ok.is_empty() {
        f.legend("pt ok", "successful");
    }
    let mut failures_drawn = 0;
    let mut failures_total = 0;
    for (row, (kind, class)) in KINDS.iter().enumerate() {
        let marks: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.status == *kind)
            .map(|(i, _)| i)
            .collect();
        if marks.is_empty() {
            continue;
        }
        failures_total += marks.len();
        // One mark per pixel column at most: marks closer than that would overlap anyway.
        let columns = (WIDTH as usize).min(max_points);
        let mut last_column = usize::MAX;
        let mut drawn = 0;
        for &i in &marks {
            let column = i * columns / rows.len().max(1);
            if column == last_column && marks.len() > columns {
                continue;
            }
            last_column = column;
            drawn += 1;
            let r = &rows[i];
            f.band_mark(
                &format!("fail {class}"),
                (i + 1) as f64,
                row,
                &format!(
                    "#{} {kind}: {}  [{}]",
                    i + 1,
                    r.reason.as_deref().unwrap_or(""),
                    describe(r)
                ),
            );
        }
        failures_drawn += drawn;
        f.legend(
            &format!("fail {class}"),
            &format!("{kind} ({})", marks.len()),
        );
    }
    Drawn {
        html: f.finish(),
        ok_drawn: keep.len(),
        ok_total: ok.len(),
        failures_drawn,
        failures_total,
    }
}

/// Indices into `ok` to draw: all of them up to `max_points`; beyond, the lowest and highest
/// value of each of `max_points / 2` intervals of evaluations and every new best (so the
/// cloud's outline and the convergence survive).
pub(crate) fn decimate(ok: &[(usize, f64)], maximize: bool, max_points: usize) -> Vec<usize> {
    if ok.len() <= max_points {
        return (0..ok.len()).collect();
    }
    let buckets = (max_points / 2).max(1);
    let first = ok[0].0;
    let span = ok[ok.len() - 1].0 - first + 1;
    let mut lo: Vec<Option<usize>> = vec![None; buckets];
    let mut hi: Vec<Option<usize>> = vec![None; buckets];
    let mut keep = Vec::new();
    let mut best: Option<f64> = None;
    for (k, &(i, v)) in ok.iter().enumerate() {
        let b = (i - first) * buckets / span;
        if lo[b].is_none_or(|j| v < ok[j].1) {
            lo[b] = Some(k);
        }
        if hi[b].is_none_or(|j| v > ok[j].1) {
            hi[b] = Some(k);
        }
        if best.is_none_or(|b| better(v, b, maximize)) {
            best = Some(v);
            keep.push(k);
        }
    }
    keep.extend(lo.into_iter().flatten());
    keep.extend(hi.into_iter().flatten());
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// Parallel coordinates of `top` (best first) over the parameters' values seen in `rows`.
pub(crate) fn parallel(rows: &[Row], top: &[&Row], label: &str) -> String {
    let Some(first) = top.first() else {
        return String::new();
    };
    let names: Vec<&str> = first.params.iter().map(|(n, _)| n.as_str()).collect();
    // Each axis lists the values the study measured, numbers in numeric order.
    let mut axes: Vec<Vec<String>> = Vec::new();
    for d in 0..names.len() {
        let mut seen: Vec<(Option<f64>, String)> = Vec::new();
        for r in rows {
            if let Some((_, v)) = r.params.get(d) {
                let text = value_display(v);
                if !seen.iter().any(|s| s.1 == text) {
                    seen.push((v.as_f64(), text));
                }
            }
        }
        if seen.iter().all(|s| s.0.is_some()) {
            seen.sort_by(|a, b| a.0.unwrap_or(0.0).total_cmp(&b.0.unwrap_or(0.0)));
        }
        axes.push(seen.into_iter().map(|s| s.1).collect());
    }
    let values: Vec<f64> = top.iter().filter_map(|r| ok_value(r)).collect();
    let (vlo, vhi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let columns = names.len() + 1;
    let (left, right, top_y, bottom) = (40.0, WIDTH - 40.0, 30.0, HEIGHT - 30.0);
    let x_of = |c: usize| left + (right - left) * c as f64 / (columns - 1).max(1) as f64;
    let y_of = |f: f64| bottom - (bottom - top_y) * f;
    let mut body = String::new();
    for (c, name) in names.iter().chain(std::iter::once(&label)).enumerate() {
        let x = x_of(c);
        let _ = write!(
            body,
            r#"<line class="pc-axis" x1="{x:.1}" y1="{top_y}" x2="{x:.1}" y2="{bottom}"/><text class="tick" x="{x:.1}" y="18" text-anchor="middle">{}</text>"#,
            escape(name)
        );
        if c < names.len() {
            let k = axes[c].len();
            for (j, v) in axes[c].iter().enumerate() {
                let y = y_of(if k > 1 {
                    j as f64 / (k - 1) as f64
                } else {
                    0.5
                });
                let _ = write!(
                    body,
                    r#"<text class="pc-value" x="{:.1}" y="{:.1}">{}</text>"#,
                    x + 3.0,
                    y + 3.0,
                    escape(v)
                );
            }
        } else {
            for v in [vlo, vhi] {
                let f = if vhi > vlo {
                    (v - vlo) / (vhi - vlo)
                } else {
                    0.5
                };
                let _ = write!(
                    body,
                    r#"<text class="pc-value" x="{:.1}" y="{:.1}">{}</text>"#,
                    x + 3.0,
                    y_of(f) + 3.0,
                    number(v)
                );
            }
        }
    }
    for (rank, r) in top.iter().enumerate().rev() {
        let mut d = String::new();
        for (c, (_, v)) in r.params.iter().enumerate().take(names.len()) {
            let text = value_display(v);
            let k = axes[c].len();
            let j = axes[c].iter().position(|a| *a == text).unwrap_or(0);
            let y = y_of(if k > 1 {
                j as f64 / (k - 1) as f64
            } else {
                0.5
            });
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if c == 0 { "M" } else { "L" },
                x_of(c),
                y
            );
        }
        let v = ok_value(r).unwrap_or(vlo);
        let f = if vhi > vlo {
            (v - vlo) / (vhi - vlo)
        } else {
            0.5
        };
        let _ = write!(d, "L{:.1},{:.1}", x_of(columns - 1), y_of(f));
        let class = if rank == 0 {
            "pc-line pc-best"
        } else {
            "pc-line"
        };
        let _ = write!(
            body,
            r#"<path class="{class}" d="{d}"><title>#{} {}: {}</title></path>"#,
            rank + 1,
            number(v),
            escape(&describe(r))
        );
    }
    format!(
        r#"<figure id="parallel"><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img">{body}</svg></figure>"#
    )
}

/// One parameter's marginal effects: a point and 95% interval per value.
pub(crate) fn effects(name: &str, effects: &[Effect], ratios: bool) -> String {
    let labels: Vec<String> = effects.iter().map(|e| e.value.clone()).collect();
    let x = Axis::categories(labels);
    let y = Axis::fit(
        effects
            .iter()
            .flat_map(|e| [e.low, e.high, e.centre])
            .chain([if ratios { 1.0 } else { 0.0 }]),
        false,
    );
    let what = if ratios {
        "relative to the geometric mean of all"
    } else {
        "difference from the mean of all"
    };
    let mut f = Figure::new(&format!("effect-{}", slug(name)), x, y, name, what);
    f.hline(
        "reference-line",
        if ratios { 1.0 } else { 0.0 },
        "all measurements",
    );
    for (i, e) in effects.iter().enumerate() {
        if e.low.is_finite() && e.high.is_finite() {
            f.error_bar("effect-bar", i as f64, e.low, e.high);
        }
        f.point(
            "effect-pt",
            i as f64,
            e.centre,
            3.5,
            &format!(
                "{name}={}: {} [{}, {}] over {} measurements",
                e.value,
                number(e.centre),
                number(e.low),
                number(e.high),
                e.count
            ),
        );
    }
    f.finish()
}

/// `name` as an HTML id.
pub(crate) fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A study of several objectives: every successful measurement of the first objective
/// against the second, the Pareto front of all of them marked (each front point's tooltip
/// gives every objective and its configuration).
pub(crate) fn front(rows: &[Row], objectives: &[Metric], on_front: &[usize]) -> String {
    let finite = |r: &Row| r.metrics.len() >= 2 && r.metrics[..2].iter().all(|v| v.is_finite());
    let ok: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].status == "ok" && finite(&rows[i]))
        .collect();
    let x = Axis::fit(ok.iter().map(|&i| rows[i].metrics[0]), true);
    let y = Axis::fit(ok.iter().map(|&i| rows[i].metrics[1]), true);
    let mut f = Figure::new("front", x, y, &objectives[0].name, &objectives[1].name);
    let values = |r: &Row| {
        objectives
            .iter()
            .zip(&r.metrics)
            .map(|(m, v)| format!("{} {}", m.name, number(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for &i in ok.iter().filter(|i| !on_front.contains(i)) {
        let r = &rows[i];
        f.point(
            "pt ok",
            r.metrics[0],
            r.metrics[1],
            2.0,
            &format!("#{} {}: {}", i + 1, values(r), describe(r)),
        );
    }
    for &i in on_front.iter().filter(|&&i| finite(&rows[i])) {
        let r = &rows[i];
        f.point(
            "pt front",
            r.metrics[0],
            r.metrics[1],
            3.5,
            &format!("#{} on the front: {}: {}", i + 1, values(r), describe(r)),
        );
    }
    f.legend("pt ok", "successful");
    f.legend("pt front", &format!("Pareto front ({})", on_front.len()));
    f.finish()
}
