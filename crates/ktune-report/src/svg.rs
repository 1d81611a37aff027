//! Figures as inline SVG, written directly rather than through a plotting crate: the report
//! must open offline with nothing but the HTML file, each mark carries a class that the
//! browser tests count and a `<title>` that the reader hovers, and the number of marks is
//! decided here (the caller decimates). `plotters`, which `ktune bench` uses for PNGs, names
//! neither its marks nor lets a figure carry tooltips.

use std::fmt::Write;

/// Width and height of a figure's drawing area in SVG units (it scales with the page).
pub const WIDTH: f64 = 760.0;
/// See [`WIDTH`].
pub const HEIGHT: f64 = 300.0;
const LEFT: f64 = 74.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 42.0;

/// A linear or logarithmic axis over `[lo, hi]`.
#[derive(Clone, Debug)]
pub struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    /// Names of the categories at 0, 1, 2, ... (the ticks then show these).
    labels: Option<Vec<String>>,
}

impl Axis {
    /// An axis spanning `values` (with a little room), logarithmic where they are all
    /// positive and span more than a factor of 20.
    pub fn fit(values: impl IntoIterator<Item = f64>, allow_log: bool) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return Axis::linear(0.0, 1.0);
        }
        if allow_log && lo > 0.0 && hi / lo > 20.0 {
            let pad = (hi / lo).powf(0.03);
            return Axis {
                lo: lo / pad,
                hi: hi * pad,
                log: true,
                labels: None,
            };
        }
        if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
            let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            return Axis::linear(lo - d, hi + d);
        }
        let pad = 0.04 * (hi - lo);
        Axis::linear(lo - pad, hi + pad)
    }

    /// A linear axis from `lo` to `hi`.
    pub fn linear(lo: f64, hi: f64) -> Axis {
        Axis {
            lo,
            hi,
            log: false,
            labels: None,
        }
    }

    /// Categories at x = 0, 1, 2, ..., labelled.
    pub fn categories(labels: Vec<String>) -> Axis {
        Axis {
            lo: -0.6,
            hi: labels.len() as f64 - 0.4,
            log: false,
            labels: Some(labels),
        }
    }

    fn tick_label(&self, v: f64) -> String {
        match &self.labels {
            Some(l) => l.get(v.round() as usize).cloned().unwrap_or_default(),
            None => number(v),
        }
    }

    /// Whether the axis is logarithmic.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// Where `v` falls, 0 at `lo` and 1 at `hi`.
    fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// About six round tick values inside the axis.
    fn ticks(&self) -> Vec<f64> {
        if let Some(l) = &self.labels {
            return (0..l.len()).map(|i| i as f64).collect();
        }
        if self.log {
            let (a, b) = (
                self.lo.log10().floor() as i32,
                self.hi.log10().ceil() as i32,
            );
            let mut out: Vec<f64> = Vec::new();
            for e in a..=b {
                for m in [1.0, 2.0, 5.0] {
                    let v = m * 10f64.powi(e);
                    if v >= self.lo && v <= self.hi {
                        out.push(v);
                    }
                }
            }
            if out.len() > 8 {
                out.retain(|v| (v.log10() - v.log10().round()).abs() < 1e-9);
            }
            return out;
        }
        let span = self.hi - self.lo;
        let raw = span / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| span / s <= 7.0)
            .unwrap_or(10.0 * mag);
        let mut v = (self.lo / step).ceil() * step;
        let mut out = Vec::new();
        while v <= self.hi + step * 1e-9 {
            out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
            v += step;
        }
        out
    }
}

/// A number as a tick label or a table cell: four significant digits, no trailing noise.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Text made safe inside HTML and SVG elements and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters have no place in a page (and some are invalid XML in SVG).
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// One figure: axes, then marks added in drawing order.
pub struct Figure {
    id: String,
    x: Axis,
    y: Axis,
    body: String,
    legend: Vec<(String, String)>,
}

impl Figure {
    /// A figure with the axes' labels drawn.
    pub fn new(id: &str, x: Axis, y: Axis, x_label: &str, y_label: &str) -> Figure {
        let mut f = Figure {
            id: id.to_string(),
            x,
            y,
            body: String::new(),
            legend: Vec::new(),
        };
        f.axes(x_label, y_label);
        f
    }

    /// SVG coordinates of a data point.
    pub fn at(&self, x: f64, y: f64) -> (f64, f64) {
        let w = WIDTH - LEFT - RIGHT;
        let h = HEIGHT - TOP - BOTTOM;
        (
            LEFT + w * self.x.fraction(x).clamp(-0.02, 1.02),
            TOP + h * (1.0 - self.y.fraction(y).clamp(-0.02, 1.02)),
        )
    }

    fn axes(&mut self, x_label: &str, y_label: &str) {
        let (x0, y0, x1, y1) = (LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, TOP);
        let _ = write!(
            self.body,
            r#"<rect class="frame" x="{x0}" y="{y1}" width="{:.1}" height="{:.1}"/>"#,
            x1 - x0,
            y0 - y1
        );
        let (xt, yt) = (self.x.ticks(), self.y.ticks());
        for v in xt {
            let px = LEFT + (WIDTH - LEFT - RIGHT) * self.x.fraction(v);
            let _ = write!(
                self.body,
                r#"<line class="grid" x1="{px:.1}" y1="{y1}" x2="{px:.1}" y2="{y0}"/><text class="tick" x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                y0 + 15.0,
                escape(&self.x.tick_label(v))
            );
        }
        for v in yt {
            let py = TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - self.y.fraction(v));
            let _ = write!(
                self.body,
                r#"<line class="grid" x1="{x0}" y1="{py:.1}" x2="{x1}" y2="{py:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                x0 - 5.0,
                py + 4.0,
                escape(&self.y.tick_label(v))
            );
        }
        let _ = write!(
            self.body,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="label" transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}{}</text>"#,
            (x0 + x1) / 2.0,
            HEIGHT - 6.0,
            escape(x_label),
            (y0 + y1) / 2.0,
            escape(y_label),
            if self.y.is_log() { " (log scale)" } else { "" }
        );
    }

    /// A step line through `points` (x ascending): each value holds until the next point.
    pub fn steps(&mut self, class: &str, points: &[(f64, f64)], end_x: f64, title: &str) {
        if points.is_empty() {
            return;
        }
        let mut d = String::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            let (px, py) = self.at(x, y);
            if i == 0 {
                let _ = write!(d, "M{px:.1},{py:.1}");
            } else {
                let _ = write!(d, "H{px:.1}V{py:.1}");
            }
        }
        let (ex, _) = self.at(end_x, points[points.len() - 1].1);
        let _ = write!(d, "H{ex:.1}");
        let _ = write!(
            self.body,
            r#"<path class="{class}" d="{d}"><title>{}</title></path>"#,
            escape(title)
        );
    }

    /// A horizontal line at `y` across the figure.
    pub fn hline(&mut self, class: &str, y: f64, title: &str) {
        let (_, py) = self.at(0.0, y);
        let _ = write!(
            self.body,
            r#"<line class="{class}" x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}"><title>{}</title></line>"#,
            WIDTH - RIGHT,
            escape(title)
        );
    }

    /// A vertical line at `x` across the figure.
    pub fn vline(&mut self, class: &str, x: f64, title: &str) {
        let (px, _) = self.at(x, 0.0);
        let _ = write!(
            self.body,
            r#"<line class="{class}" x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}"><title>{}</title></line>"#,
            HEIGHT - BOTTOM,
            escape(title)
        );
    }

    /// A point with a tooltip.
    pub fn point(&mut self, class: &str, x: f64, y: f64, radius: f64, title: &str) {
        let (px, py) = self.at(x, y);
        let _ = write!(
            self.body,
            r#"<circle class="{class}" cx="{px:.1}" cy="{py:.1}" r="{radius}"><title>{}</title></circle>"#,
            escape(title)
        );
    }

    /// A short vertical tick at `x`, in a band `row` rows from the top (failures).
    pub fn band_mark(&mut self, class: &str, x: f64, row: usize, title: &str) {
        let (px, _) = self.at(x, 0.0);
        let y = TOP + 2.0 + 9.0 * row as f64;
        let _ = write!(
            self.body,
            r#"<rect class="{class}" x="{:.1}" y="{y:.1}" width="2" height="7"><title>{}</title></rect>"#,
            px - 1.0,
            escape(title)
        );
    }

    /// A vertical error bar from `lo` to `hi` at `x`.
    pub fn error_bar(&mut self, class: &str, x: f64, lo: f64, hi: f64) {
        let (px, a) = self.at(x, lo);
        let (_, b) = self.at(x, hi);
        let _ = write!(
            self.body,
            r#"<line class="{class}" x1="{px:.1}" y1="{a:.1}" x2="{px:.1}" y2="{b:.1}"/>"#
        );
    }

    /// An entry of the legend: the CSS class of its swatch and its text.
    pub fn legend(&mut self, class: &str, text: &str) {
        self.legend.push((class.to_string(), text.to_string()));
    }

    /// The figure as an `<svg>` element with its legend below.
    pub fn finish(self) -> String {
        let mut out = format!(
            r#"<figure id="{}"><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img">{}</svg>"#,
            self.id, self.body
        );
        if !self.legend.is_empty() {
            out.push_str(r#"<figcaption class="legend">"#);
            for (class, text) in &self.legend {
                let _ = write!(
                    out,
                    r#"<span><i class="swatch {class}"></i>{}</span>"#,
                    escape(text)
                );
            }
            out.push_str("</figcaption>");
        }
        out.push_str("</figure>");
        out
    }
}
