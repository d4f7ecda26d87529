//! The report's charts: inline SVG written here, no JavaScript library. Every chart is a
//! `<svg class="plot">` with a `<title>` per mark (the browser's tooltip; the report's
//! few lines of script show it on hover), and numbers printed with fixed precision so the
//! bytes are the same for the same inputs.

use std::fmt::Write;

/// Plot area geometry.
const W: f64 = 900.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;

/// A categorical palette (colour-blind-safe "Tableau 10").
pub const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// A number as the report prints it: up to 4 significant digits, no exponent for
/// ordinary magnitudes.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if !(1e-4..1e6).contains(&a) {
        format!("{v:.3e}")
    } else {
        let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        format!("{v:.digits$}")
    };
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn f(v: f64) -> String {
    format!("{v:.1}")
}

/// "Nice" ticks between `lo` and `hi`.
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

/// A chart under construction: a frame with axes and a legend.
pub struct Chart {
    out: String,
    h: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    legend: Vec<(String, String)>,
}

impl Chart {
    /// A chart `plot_h` pixels high (plot area), `x` and `y` ranges, with its labels.
    pub fn new(
        title: &str,
        xlabel: &str,
        ylabel: &str,
        x: (f64, f64),
        y: (f64, f64),
        plot_h: f64,
    ) -> Self {
        let h = TOP + plot_h + BOTTOM;
        let (mut y0, mut y1) = y;
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        if !y0.is_finite() {
            y0 = 0.0;
        }
        let (x0, mut x1) = x;
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg class=\"plot\" viewBox=\"0 0 {W} {}\" width=\"{W}\" height=\"{}\" role=\"img\" aria-label=\"{}\">",
            f(h),
            f(h),
            esc(title)
        );
        let _ = write!(
            out,
            "<text class=\"t\" x=\"{LEFT}\" y=\"16\">{}</text>",
            esc(title)
        );
        let mut c = Chart {
            out,
            h,
            x0,
            x1,
            y0,
            y1,
            legend: Vec::new(),
        };
        c.axes(xlabel, ylabel);
        c
    }

    fn pw() -> f64 {
        W - LEFT - RIGHT
    }
    fn ph(&self) -> f64 {
        self.h - TOP - BOTTOM
    }
    /// x in pixels.
    pub fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * Self::pw()
    }
    /// y in pixels.
    pub fn py(&self, y: f64) -> f64 {
        TOP + self.ph() - (y - self.y0) / (self.y1 - self.y0) * self.ph()
    }

    fn axes(&mut self, xlabel: &str, ylabel: &str) {
        let (b, r) = (TOP + self.ph(), LEFT + Self::pw());
        let _ = write!(
            self.out,
            "<rect class=\"frame\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/>",
            f(Self::pw()),
            f(self.ph())
        );
        // no numeric ticks on a chart whose rows are named (Gantt, heatmap)
        let y_ticks = if ylabel.is_empty() {
            Vec::new()
        } else {
            ticks(self.y0, self.y1, 5)
        };
        for t in y_ticks {
            let y = self.py(t);
            let _ = write!(
                self.out,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"yt\" x=\"{}\" y=\"{}\">{}</text>",
                f(r), f(y), f(y), f(LEFT - 4.0), f(y + 4.0), num(t)
            );
        }
        let _ = write!(
            self.out,
            "<text class=\"xl\" x=\"{}\" y=\"{}\">{}</text><text class=\"yl\" transform=\"translate(14 {}) rotate(-90)\">{}</text>",
            f(LEFT + Self::pw() / 2.0),
            f(self.h - 6.0),
            esc(xlabel),
            f(TOP + self.ph() / 2.0),
            esc(ylabel)
        );
        let _ = b;
    }

    /// Numeric ticks on the x axis.
    pub fn x_ticks(&mut self) {
        let b = TOP + self.ph();
        for t in ticks(self.x0, self.x1, 8) {
            let x = self.px(t);
            let _ = write!(
                self.out,
                "<text class=\"xt\" x=\"{}\" y=\"{}\">{}</text>",
                f(x),
                f(b + 14.0),
                num(t)
            );
        }
    }

    /// Category labels on the x axis at 0.5, 1.5, … (x range 0..n).
    pub fn x_categories(&mut self, names: &[String]) {
        let b = TOP + self.ph();
        for (i, n) in names.iter().enumerate() {
            let x = self.px(i as f64 + 0.5);
            let _ = write!(
                self.out,
                "<text class=\"xt\" x=\"{}\" y=\"{}\">{}</text>",
                f(x),
                f(b + 14.0),
                esc(n)
            );
        }
    }

    /// Adds a legend entry.
    pub fn legend(&mut self, name: &str, colour: &str) {
        self.legend.push((name.to_string(), colour.to_string()));
    }

    /// A raw SVG fragment.
    pub fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// A rectangle in data coordinates with a tooltip.
    pub fn rect(&mut self, x: (f64, f64), y: (f64, f64), fill: &str, opacity: f64, tip: &str) {
        let (a, b) = (self.px(x.0), self.px(x.1));
        let (c, d) = (self.py(y.1), self.py(y.0));
        let op = if opacity < 1.0 {
            format!(" fill-opacity=\"{opacity:.2}\"")
        } else {
            String::new()
        };
        let _ = write!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{:.2}\" height=\"{}\" fill=\"{fill}\"{op}><title>{}</title></rect>",
            f(a),
            f(c),
            (b - a).max(0.3),
            f((d - c).max(0.5)),
            esc(tip)
        );
    }

    /// A polyline through data points; `step` draws it as steps (value held until the next).
    pub fn line(&mut self, pts: &[(f64, f64)], colour: &str, step: bool, name: &str) {
        if pts.is_empty() {
            return;
        }
        let mut d = String::new();
        for (i, &(x, y)) in pts.iter().enumerate() {
            let (px, py) = (self.px(x), self.py(y));
            if i == 0 {
                let _ = write!(d, "M{} {}", f(px), f(py));
            } else if step {
                let _ = write!(d, "H{}V{}", f(px), f(py));
            } else {
                let _ = write!(d, "L{} {}", f(px), f(py));
            }
        }
        let _ = write!(
            self.out,
            "<path class=\"ln\" d=\"{d}\" stroke=\"{colour}\"><title>{}</title></path>",
            esc(name)
        );
    }

    /// A dot with a tooltip.
    pub fn dot(&mut self, x: f64, y: f64, colour: &str, tip: &str) {
        let _ = write!(
            self.out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{colour}\" fill-opacity=\"0.75\"><title>{}</title></circle>",
            f(self.px(x)),
            f(self.py(y)),
            esc(tip)
        );
    }

    /// A vertical error bar from `lo` to `hi` at `x`.
    pub fn whisker(&mut self, x: f64, lo: f64, hi: f64, colour: &str) {
        let px = self.px(x);
        let _ = write!(
            self.out,
            "<path class=\"wh\" d=\"M{} {}V{}M{} {}H{}M{} {}H{}\" stroke=\"{colour}\"/>",
            f(px),
            f(self.py(lo)),
            f(self.py(hi)),
            f(px - 4.0),
            f(self.py(lo)),
            f(px + 4.0),
            f(px - 4.0),
            f(self.py(hi)),
            f(px + 4.0)
        );
    }

    /// Text at data coordinates.
    pub fn label(&mut self, x: f64, y: f64, text: &str, class: &str) {
        let _ = write!(
            self.out,
            "<text class=\"{class}\" x=\"{}\" y=\"{}\">{}</text>",
            f(self.px(x)),
            f(self.py(y)),
            esc(text)
        );
    }

    /// The finished SVG.
    pub fn finish(mut self) -> String {
        let x = LEFT + Self::pw() + 12.0;
        for (i, (n, c)) in self.legend.iter().enumerate().take(24) {
            let y = TOP + 6.0 + i as f64 * 16.0;
            let _ = write!(
                self.out,
                "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{c}\"/><text class=\"lg\" x=\"{}\" y=\"{}\">{}</text>",
                f(x),
                f(y),
                f(x + 14.0),
                f(y + 9.0),
                esc(n)
            );
        }
        if self.legend.len() > 24 {
            let _ = write!(
                self.out,
                "<text class=\"lg\" x=\"{}\" y=\"{}\">+{} more</text>",
                f(x),
                f(TOP + 6.0 + 24.0 * 16.0 + 9.0),
                self.legend.len() - 24
            );
        }
        self.out.push_str("</svg>");
        self.out
    }
}

/// The range of values (min, max), with `0` included when `zero`; (0, 1) when empty.
pub fn range(vals: impl IntoIterator<Item = f64>, zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.05;
    (if zero && lo == 0.0 { 0.0 } else { lo - pad }, hi + pad)
}

/// A bar series: name, one value per category, optional whiskers `(lo, hi)`.
pub type BarSeries = (String, Vec<f64>, Option<Vec<(f64, f64)>>);

/// A grouped bar chart: `cats` on x, one bar per series per category, with optional
/// whiskers `(lo, hi)`.
pub fn bars(title: &str, ylabel: &str, cats: &[String], series: &[BarSeries]) -> String {
    let all = series.iter().flat_map(|s| {
        s.1.iter()
            .copied()
            .chain(s.2.iter().flatten().flat_map(|w| [w.0, w.1]))
    });
    let y = range(all, true);
    let mut c = Chart::new(title, "", ylabel, (0.0, cats.len().max(1) as f64), y, 220.0);
    c.x_categories(cats);
    let n = series.len().max(1) as f64;
    let bw = 0.8 / n;
    for (si, (name, vals, wh)) in series.iter().enumerate() {
        let col = colour(si);
        c.legend(name, col);
        for (i, v) in vals.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let x0 = i as f64 + 0.1 + si as f64 * bw;
            let tip = format!(
                "{name} · {}: {}",
                cats.get(i).map_or("", |s| s.as_str()),
                num(*v)
            );
            c.rect((x0, x0 + bw * 0.9), (0f64.max(y.0), *v), col, 1.0, &tip);
            if let Some((lo, hi)) = wh.as_ref().and_then(|w| w.get(i)) {
                c.whisker(x0 + bw * 0.45, *lo, *hi, "#333");
            }
        }
    }
    c.finish()
}

/// A strip chart: per category and series, every value as a dot (spread sideways by
/// its index, deterministic), with the mean as a bar.
pub fn strips(
    title: &str,
    ylabel: &str,
    cats: &[String],
    series: &[(String, Vec<Vec<f64>>)],
) -> String {
    let y = range(
        series.iter().flat_map(|s| s.1.iter().flatten().copied()),
        true,
    );
    let mut c = Chart::new(title, "", ylabel, (0.0, cats.len().max(1) as f64), y, 240.0);
    c.x_categories(cats);
    let n = series.len().max(1) as f64;
    let bw = 0.8 / n;
    for (si, (name, per_cat)) in series.iter().enumerate() {
        let col = colour(si);
        c.legend(name, col);
        for (i, vals) in per_cat.iter().enumerate() {
            let x0 = i as f64 + 0.1 + si as f64 * bw;
            let k = vals.len().max(1) as f64;
            for (j, v) in vals.iter().enumerate() {
                let x = x0 + bw * (0.15 + 0.6 * (j as f64 + 0.5) / k);
                c.dot(
                    x,
                    *v,
                    col,
                    &format!("{name} · {} #{j}: {}", cats[i], num(*v)),
                );
            }
            if !vals.is_empty() {
                let mean = vals.iter().sum::<f64>() / vals.len() as f64;
                let (a, b) = (c.px(x0 + bw * 0.05), c.px(x0 + bw * 0.85));
                let yy = c.py(mean);
                c.raw(&format!(
                    "<path class=\"mean\" d=\"M{} {}H{}\" stroke=\"{col}\"><title>{} mean: {}</title></path>",
                    f(a), f(yy), f(b), esc(name), num(mean)
                ));
            }
        }
    }
    c.finish()
}

/// A heatmap: rows × columns, each cell's value as the shade, printed in the cell.
pub fn heatmap(
    title: &str,
    rows: &[String],
    cols: &[String],
    vals: &[Vec<f64>],
    unit: &str,
) -> String {
    let cell_h = 18.0;
    let h = (rows.len().max(1) as f64) * cell_h;
    let mut c = Chart::new(
        title,
        "CPU",
        "",
        (0.0, cols.len().max(1) as f64),
        (0.0, rows.len().max(1) as f64),
        h,
    );
    c.x_categories(cols);
    let max = vals.iter().flatten().copied().fold(0.0f64, f64::max);
    for (r, row) in vals.iter().enumerate() {
        let y = (rows.len() - 1 - r) as f64;
        c.raw(&format!(
            "<text class=\"yt\" x=\"{}\" y=\"{}\">{}</text>",
            f(LEFT - 4.0),
            f(c.py(y + 0.5) + 4.0),
            esc(&rows[r])
        ));
        for (k, v) in row.iter().enumerate() {
            let shade = if max > 0.0 { v / max } else { 0.0 };
            let tip = format!("{} on {}: {} {unit}", rows[r], cols[k], num(*v));
            c.rect(
                (k as f64, k as f64 + 1.0),
                (y, y + 1.0),
                "#b2182b",
                0.05 + 0.95 * shade,
                &tip,
            );
            if *v > 0.0 && cols.len() <= 16 {
                c.label(k as f64 + 0.5, y + 0.25, &num(*v), "cell");
            }
        }
    }
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_stably() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(1234.5678), "1235");
        assert_eq!(num(0.012345), "0.01235");
        assert_eq!(num(2e7), "2.000e7");
        assert_eq!(esc("<a&\"b\">"), "&lt;a&amp;&quot;b&quot;&gt;");
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    }
}
