//! The page: sections in the order a reader asks their questions, around the figures.

use std::collections::HashMap;
use std::fmt::Write;

use ktune_store::{Row, value_display};

use crate::figures::{self, KINDS, describe, ok_value};
use crate::importance;
use crate::svg::{escape, number};
use crate::{Options, ReportError, Study};

const STYLE: &str = include_str!("report.css");

/// The successful rows, best first.
fn ranked(rows: &[Row], maximize: bool) -> Vec<&Row> {
    let mut ranked: Vec<&Row> = rows.iter().filter(|r| ok_value(r).is_some()).collect();
    ranked.sort_by(|a, b| {
        let (x, y) = (ok_value(a).unwrap_or(0.0), ok_value(b).unwrap_or(0.0));
        if maximize {
            y.total_cmp(&x)
        } else {
            x.total_cmp(&y)
        }
    });
    ranked
}

/// The report of `study` as one HTML document.
pub fn render(study: &Study, options: &Options) -> Result<String, ReportError> {
    if study.rows.is_empty() {
        return Err(ReportError::Empty {
            study: study.name.clone(),
        });
    }
    let maximize = study.maximize();
    let unit = study.meta(ktune_core::UNIT_KEY).filter(|u| !u.is_empty());
    let label = match unit {
        Some(u) => format!("{} ({u})", study.objective()),
        None => study.objective().to_string(),
    };
    let rows = &study.rows;
    let ranked = ranked(rows, maximize);
    let default_row = study
        .default
        .as_ref()
        .and_then(|d| rows.iter().find(|r| r.params == *d));
    let default_value = default_row.and_then(ok_value);
    let budget = study
        .meta(ktune_core::BUDGET_KEY)
        .and_then(|b| b.parse::<usize>().ok());

    let mut page = String::with_capacity(64 * 1024 + rows.len() * 64);
    let title = format!("ktune report: {}", study.name);
    let _ = write!(
        page,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:{}"><title>{}</title><style>{STYLE}</style>{}</head><body{}><header><h1>{}</h1><p class="source">{}</p><p id="live"></p></header><main data-evaluations="{}">"#,
        if options.live_script.is_some() {
            "; script-src 'self'; connect-src 'self'"
        } else {
            ""
        },
        escape(&title),
        options
            .live_script
            .as_ref()
            .map_or(String::new(), |l| format!(
                r#"<script src="{}" defer></script>"#,
                escape(&l.script)
            )),
        options
            .live_script
            .as_ref()
            .map_or(String::new(), |l| format!(
                r#" data-state="{}" data-body="{}""#,
                escape(&l.state),
                escape(&l.body)
            )),
        escape(&title),
        escape(&study.source),
        rows.len()
    );
    summary(
        &mut page,
        study,
        &ranked,
        default_row,
        default_value,
        &label,
        maximize,
    );

    page.push_str(r#"<section id="convergence-section"><h2>Convergence</h2>"#);
    page.push_str(&figures::convergence(
        rows,
        maximize,
        &label,
        default_value,
        budget,
    ));
    page.push_str(&stopping(study, rows.len(), budget));
    if let Some(w) = figures::wall_time(rows, maximize, &label) {
        page.push_str(&w);
    }
    page.push_str("</section>");

    let drawn = figures::measurements(rows, maximize, &label, options.max_points);
    let _ = write!(
        page,
        r#"<section id="measurements-section"><h2>Every measurement</h2>{}<p class="caption" id="drawn">Drawn: {} of {} successful measurements{}; {} of {} failures{}. Hover a mark for its configuration.</p></section>"#,
        drawn.html,
        drawn.ok_drawn,
        drawn.ok_total,
        if drawn.ok_drawn < drawn.ok_total {
            " (the lowest and highest of each interval of evaluations, and every new best)"
        } else {
            ""
        },
        drawn.failures_drawn,
        drawn.failures_total,
        if drawn.failures_drawn < drawn.failures_total {
            " (one mark per kind and pixel column)"
        } else {
            ""
        }
    );

    front_section(&mut page, study);
    failures(&mut page, rows);
    importance_section(&mut page, rows, maximize, &label);
    best_section(&mut page, study, rows, &ranked, options, &label);
    facts(&mut page, study);
    let _ = write!(
        page,
        r#"</main><footer>Made by {} {}. The page loads nothing: figures are inline SVG.</footer></body></html>"#,
        escape(&options.generator),
        if options.generated.is_empty() {
            String::new()
        } else {
            format!("on {}", escape(&options.generated))
        }
    );
    Ok(page)
}

/// A study of several objectives: the Pareto front, drawn over the first two objectives and
/// listed with every objective; nothing for a study of one.
fn front_section(page: &mut String, study: &Study) {
    let objectives: Vec<ktune_core::Metric> = study
        .meta(ktune_core::OBJECTIVES_KEY)
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    if objectives.len() < 2 {
        return;
    }
    let rows = &study.rows;
    let values: Vec<Option<&[f64]>> = rows
        .iter()
        .map(|r| (r.status == "ok").then_some(r.metrics.as_slice()))
        .collect();
    let on_front = ktune_core::pareto::front_of(&values, &objectives);
    let ok = values.iter().filter(|v| v.is_some()).count();
    let names: Vec<String> = objectives
        .iter()
        .map(|m| format!("{} ({})", m.name, m.direction.name()))
        .collect();
    let _ = write!(
        page,
        r#"<section id="front-section"><h2>Pareto front</h2>{}<p class="caption">{} of {} successful configurations are on the Pareto front of {}: no other is at least as good in every objective and better in one.{} Hover a mark for its objectives and configuration.</p><table class="front"><thead><tr><th>evaluation</th>"#,
        figures::front(rows, &objectives, &on_front),
        on_front.len(),
        ok,
        escape(&names.join(", ")),
        if objectives.len() > 2 {
            " The figure shows the first two objectives; the table lists them all."
        } else {
            ""
        }
    );
    for m in &objectives {
        let _ = write!(page, "<th>{}</th>", escape(&m.name));
    }
    page.push_str("<th>configuration</th></tr></thead><tbody>");
    for &i in &on_front {
        let r = &rows[i];
        let _ = write!(page, r#"<tr class="front-row"><td>{}</td>"#, i + 1);
        for v in r.metrics.iter().take(objectives.len()) {
            let _ = write!(page, "<td>{}</td>", number(*v));
        }
        let _ = write!(page, "<td><code>{}</code></td></tr>", escape(&describe(r)));
    }
    page.push_str("</tbody></table>");
    // The configuration the study was tuned to find, where it sought a goal.
    if let Some(text) = study.meta(ktune_core::GOAL_KEY)
        && let Ok(goal) = ktune_core::pareto::Goal::parse(text, &objectives)
    {
        let points: Vec<Option<Vec<f64>>> = values.iter().map(|v| v.map(<[f64]>::to_vec)).collect();
        let directions: Vec<_> = objectives.iter().map(|m| m.direction).collect();
        if let Some(i) = goal.pick(&points, &directions) {
            let _ = write!(
                page,
                r#"<p class="caption" id="goal-pick">The study's goal, <code>{}</code>, picks evaluation {}: <code>{}</code>.</p>"#,
                escape(text),
                i + 1,
                escape(&describe(&rows[i]))
            );
        }
    }
    page.push_str("</section>");
}

fn summary(
    page: &mut String,
    study: &Study,
    ranked: &[&Row],
    default_row: Option<&Row>,
    default_value: Option<f64>,
    label: &str,
    maximize: bool,
) {
    let rows = &study.rows;
    let failed = rows.iter().filter(|r| r.status != "ok").count();
    let _ = write!(
        page,
        r#"<section id="summary"><div class="cards"><div class="card"><b id="n-evaluations">{}</b>evaluations</div><div class="card"><b id="n-failed">{failed}</b>failed ({:.0}%)</div><div class="card"><b>{}</b>workers</div>"#,
        rows.len(),
        100.0 * failed as f64 / rows.len() as f64,
        study.workers.len().max(1)
    );
    match ranked.first() {
        Some(best) => {
            let v = ok_value(best).unwrap_or(f64::NAN);
            let _ = write!(
                page,
                r#"<div class="card"><b id="best-value">{}</b>best {} ({})</div>"#,
                number(v),
                escape(label),
                if maximize { "maximised" } else { "minimised" }
            );
            if let Some(d) = default_value {
                let gain = if maximize { v / d } else { d / v };
                let _ = write!(
                    page,
                    r#"<div class="card"><b>{}×</b>better than the default ({})</div>"#,
                    number(gain),
                    number(d)
                );
            }
            let _ = write!(
                page,
                r#"</div><p>Best configuration (evaluation {}): <code>{}</code></p>"#,
                best.seq + 1,
                escape(&describe(best))
            );
        }
        None => page.push_str(
            r#"</div><p class="warning" id="no-success">No configuration ran successfully: there is no best value and nothing converged. The failures below say why.</p>"#,
        ),
    }
    if let Some(d) = default_row
        && default_value.is_none()
    {
        let _ = write!(
            page,
            r#"<p class="warning">The default configuration failed ({}).</p>"#,
            escape(&d.status)
        );
    }
    page.push_str("</section>");
}

/// Why the study stopped, as far as its records tell.
fn stopping(study: &Study, n: usize, budget: Option<usize>) -> String {
    // `ktune tune` stores why its last worker stopped.
    let why = study.meta("stopped").map(|s| match s {
        "evaluations" => "its evaluation budget was spent".to_string(),
        "time" => "its time limit was reached".to_string(),
        "target" => "its target value was reached".to_string(),
        "space_exhausted" => "every configuration had been evaluated".to_string(),
        "strategy_exhausted" => "the strategy proposed nothing new".to_string(),
        "interrupted" => "it was interrupted (Ctrl-C)".to_string(),
        other => other.to_string(),
    });
    if let Some(why) = why {
        let of = budget.map_or(String::new(), |b| format!(" of its budget of {b}"));
        return format!(
            r#"<p class="caption" id="stopping">{}</p>"#,
            escape(&format!(
                "{n} evaluations{of}; the last worker stopped because {why}."
            ))
        );
    }
    let text = match budget {
        Some(b) if n >= b => format!("Stopped at its budget: {n} of {b} evaluations."),
        Some(b) => format!(
            "{n} of its budget of {b} evaluations: it stopped early (a time limit, an interruption, a strategy that ran out of configurations) or is still running."
        ),
        None => format!("{n} evaluations, no budget recorded."),
    };
    format!(r#"<p class="caption" id="stopping">{}</p>"#, escape(&text))
}

fn failures(page: &mut String, rows: &[Row]) {
    page.push_str(r#"<section id="failures"><h2>Failures</h2>"#);
    let failed: Vec<&Row> = rows.iter().filter(|r| r.status != "ok").collect();
    if failed.is_empty() {
        page.push_str("<p>None: every configuration ran.</p></section>");
        return;
    }
    page.push_str(r#"<table class="failures"><thead><tr><th>kind</th><th>count</th><th>share</th><th>most common messages (count, an example configuration)</th></tr></thead><tbody>"#);
    let mut kinds: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
    for r in &failed {
        if !kinds.contains(&r.status.as_str()) {
            kinds.push(r.status.as_str());
        }
    }
    for kind in kinds {
        let of_kind: Vec<&&Row> = failed.iter().filter(|r| r.status == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        // Messages that differ only in their numbers are one message.
        let mut messages: HashMap<String, (usize, &Row, String)> = HashMap::new();
        for r in &of_kind {
            let text = r.reason.as_deref().unwrap_or("(no message)");
            let e = messages
                .entry(shape(text))
                .or_insert((0, r, text.to_string()));
            e.0 += 1;
        }
        let mut messages: Vec<(usize, &Row, String)> = messages.into_values().collect();
        messages.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.seq.cmp(&b.1.seq)));
        let _ = write!(
            page,
            r#"<tr class="kind-{kind}"><td><i class="swatch fail f-{}"></i>{}</td><td>{}</td><td>{:.1}%</td><td><ul>"#,
            KINDS
                .iter()
                .find(|k| k.0 == kind)
                .map_or("other", |k| &k.1[2..]),
            escape(kind),
            of_kind.len(),
            100.0 * of_kind.len() as f64 / rows.len() as f64
        );
        for (count, example, text) in messages.iter().take(3) {
            let _ = write!(
                page,
                r#"<li><span class="message">{}</span> <span class="count">×{count}</span><br><code>{}</code></li>"#,
                escape(&clip(text, 300)),
                escape(&describe(example))
            );
        }
        if messages.len() > 3 {
            let _ = write!(page, "<li>and {} other messages</li>", messages.len() - 3);
        }
        page.push_str("</ul></td></tr>");
    }
    page.push_str("</tbody></table></section>");
}

/// A message with its numbers blanked, so that `line 12` and `line 13` count as one.
fn shape(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars().take(400) {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

fn importance_section(page: &mut String, rows: &[Row], maximize: bool, label: &str) {
    page.push_str(r#"<section id="importance"><h2>Which parameters matter</h2>"#);
    let ok: Vec<&Row> = rows.iter().filter(|r| ok_value(r).is_some()).collect();
    let names: Vec<String> = ok
        .first()
        .map(|r| r.params.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let data: Vec<(Vec<String>, f64)> = ok
        .iter()
        .map(|r| {
            let v = ok_value(r).unwrap_or(0.0);
            (
                r.params.iter().map(|(_, v)| value_display(v)).collect(),
                if maximize { -v } else { v },
            )
        })
        .collect();
    let shown: Vec<f64> = ok.iter().filter_map(|r| ok_value(r)).collect();
    let Some(a) = importance::analyse(&names, &data, &shown) else {
        let _ = write!(
            page,
            "<p>Needs at least {} successful measurements ({} here).</p></section>",
            importance::MIN_MEASUREMENTS,
            ok.len()
        );
        return;
    };
    let _ = write!(
        page,
        r#"<p>PED-ANOVA over {} successful measurements: how differently the best {} use each parameter's values than all of them do. <em>chance</em> is what the divergence would be if the parameter did not matter; a parameter is marked when it is beyond chance at the 0.1% level.</p><table class="importance"><thead><tr><th>parameter</th><th>share</th><th>divergence</th><th>chance</th><th>matters</th></tr></thead><tbody>"#,
        a.measurements, a.best_set
    );
    for p in &a.params {
        let _ = write!(
            page,
            r#"<tr class="param{}" data-param="{}"><td>{}</td><td><span class="bar" style="width:{:.0}px"></span> {:.0}%</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            if p.important { " important" } else { "" },
            escape(&p.name),
            escape(&p.name),
            120.0 * p.share,
            100.0 * p.share,
            number(p.divergence),
            number(p.chance),
            if p.important { "yes" } else { "" }
        );
    }
    page.push_str("</tbody></table>");
    if a.pairs.is_empty() {
        page.push_str("<p>No pair of parameters matters beyond what each does alone.</p>");
    } else {
        page.push_str(r#"<p>Pairs whose effect together is more than the sum of their own (two-way analysis of variance of the objective's logarithm; significant at the 0.1% level and explaining at least 1% of its variance):</p><ul id="pairs">"#);
        for p in &a.pairs {
            let _ = write!(
                page,
                r#"<li class="pair">{} × {}: {:.1}% of the variance</li>"#,
                escape(&p.names.0),
                escape(&p.names.1),
                100.0 * p.share
            );
        }
        page.push_str("</ul>");
    }
    let _ = write!(
        page,
        "<h3>Marginal effects</h3><p>{} for each value of the {} most important parameters, with 95% intervals (values seen fewer than twice have none).</p><div class=\"effects\">",
        if a.ratios {
            format!(
                "Geometric mean of the {} relative to that of all measurements",
                escape(label)
            )
        } else {
            format!("Mean {} minus that of all measurements", escape(label))
        },
        a.params.len().min(4)
    );
    for (p, e) in a.params.iter().zip(&a.effects).take(4) {
        page.push_str(&figures::effects(&p.name, e, a.ratios));
    }
    page.push_str("</div></section>");
}

fn best_section(
    page: &mut String,
    study: &Study,
    rows: &[Row],
    ranked: &[&Row],
    options: &Options,
    label: &str,
) {
    page.push_str(r#"<section id="best"><h2>The best configurations</h2>"#);
    if ranked.is_empty() {
        page.push_str("<p>None ran successfully.</p></section>");
        return;
    }
    let top: Vec<&Row> = ranked.iter().take(options.top).copied().collect();
    let _ = write!(
        page,
        "<p>The best {} as parallel coordinates (the best drawn thickest; each axis lists the values measured):</p>",
        top.len()
    );
    page.push_str(&figures::parallel(rows, &top, label));
    let _ = write!(
        page,
        r#"<table class="top"><thead><tr><th>rank</th><th>{}</th><th>median</th><th>95% interval</th><th>samples</th><th>evaluation</th><th>worker</th><th>configuration</th></tr></thead><tbody>"#,
        escape(label)
    );
    for (i, r) in top.iter().enumerate() {
        let s = r.summary();
        let _ = write!(
            page,
            r#"<tr class="top-row"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>"#,
            i + 1,
            number(ok_value(r).unwrap_or(f64::NAN)),
            s.as_ref().map_or("-".into(), |s| number(s.median)),
            s.as_ref().map_or("-".into(), |s| format!(
                "[{}, {}]",
                number(s.ci_low),
                number(s.ci_high)
            )),
            s.as_ref().map_or("-".into(), |s| s.n.to_string()),
            r.seq + 1,
            escape(r.worker.as_deref().unwrap_or("")),
            escape(&describe(r))
        );
    }
    page.push_str("</tbody></table>");
    if let Some(text) = study.meta("rerank")
        && let Ok(r) = serde_json::from_str::<serde_json::Value>(text)
    {
        let _ = write!(
            page,
            r#"<h3>Re-ranking</h3><p>The best {} measured again, interleaved, over {} rounds; {}.</p><table class="rerank"><thead><tr><th>rank</th><th>before</th><th>in the re-ranking</th><th>in the run</th><th>configuration</th></tr></thead><tbody>"#,
            r["finalists"].as_array().map_or(0, Vec::len),
            r["rounds"],
            if r["winner_changed"].as_bool() == Some(true) {
                "the winner changed"
            } else {
                "the winner stood"
            }
        );
        for (i, f) in r["finalists"].as_array().into_iter().flatten().enumerate() {
            let _ = write!(
                page,
                r#"<tr class="rerank-row"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>"#,
                i + 1,
                f["rank_before"]
                    .as_u64()
                    .map_or("-".into(), |r| (r + 1).to_string()),
                f["after"]
                    .as_f64()
                    .map_or_else(|| "failed".to_string(), number),
                f["before"].as_f64().map_or("-".into(), number),
                escape(f["configuration"].as_str().unwrap_or(""))
            );
        }
        page.push_str("</tbody></table>");
    }
    page.push_str("</section>");
}

fn facts(page: &mut String, study: &Study) {
    page.push_str(r#"<section id="facts"><h2>The study's facts</h2><table class="facts"><tbody>"#);
    let mut row = |k: &str, v: &str| {
        let _ = write!(
            page,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(k),
            escape(v)
        );
    };
    row("study", &study.name);
    row("source", &study.source);
    if let Some(c) = study.created {
        row("created", &ktune_core::utc_text(c));
    }
    for (k, v) in &study.meta {
        // The re-ranking has its own table above.
        if k == "rerank" {
            continue;
        }
        row(k, &clip(v, 2000));
    }
    for n in &study.notes {
        row("note", n);
    }
    page.push_str("</tbody></table>");
    if !study.workers.is_empty() {
        page.push_str(r#"<table class="workers"><thead><tr><th>worker</th><th>host</th><th>device</th><th>joined</th><th>evaluations</th><th>failed</th></tr></thead><tbody>"#);
        for w in &study.workers {
            let mine: Vec<&Row> = study
                .rows
                .iter()
                .filter(|r| r.worker.as_deref() == Some(w.worker.as_str()))
                .collect();
            let _ = write!(
                page,
                r#"<tr class="worker-row"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                escape(&w.worker),
                escape(&w.host),
                escape(&w.device),
                w.joined.map_or("-".into(), ktune_core::utc_text),
                mine.len(),
                mine.iter().filter(|r| r.status != "ok").count()
            );
        }
        page.push_str("</tbody></table>");
    }
    page.push_str("</section>");
}

/// A short view of `study` for a notebook cell: its counts, the best value and the best
/// `top` configurations, styled inline (a notebook's page has styles of its own).
pub fn fragment(study: &Study, top: usize) -> String {
    let maximize = study.maximize();
    let rows = &study.rows;
    let ranked = ranked(rows, maximize);
    let failed = rows.len() - rows.iter().filter(|r| r.status == "ok").count();
    let mut out = format!(
        "<div class=\"ktune-study\"><p><b>ktune study</b>: {} evaluations, {failed} failed; {} {}</p>",
        rows.len(),
        escape(study.objective()),
        if maximize { "maximised" } else { "minimised" }
    );
    if ranked.is_empty() {
        out.push_str("<p>No successful measurement yet.</p></div>");
        return out;
    }
    let _ = write!(
        out,
        "<table><thead><tr><th style=\"text-align:right\">rank</th><th style=\"text-align:right\">{}</th><th style=\"text-align:left\">configuration</th></tr></thead><tbody>",
        escape(study.objective())
    );
    for (i, r) in ranked.iter().take(top).enumerate() {
        let _ = write!(
            out,
            "<tr><td style=\"text-align:right\">{}</td><td style=\"text-align:right\">{}</td><td style=\"text-align:left\"><code>{}</code></td></tr>",
            i + 1,
            number(ok_value(r).unwrap_or(f64::NAN)),
            escape(&describe(r))
        );
    }
    out.push_str("</tbody></table></div>");
    out
}
