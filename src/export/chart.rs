//! Charts of a [`Report`], as SVG and PNG (plotters, with the DejaVu Sans
//! font bundled in `assets/fonts`, so no system font library is needed):
//! per pass, MB/s per disk with flagged disks in red and the array's median
//! drawn across; MB/s across the surface, one line per disk, slow regions
//! shaded; reads per MHDD latency bin, one line per disk.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::judge::Verdict;
use crate::measure::PassKind;
use crate::output::Dir;
use crate::report::{Pass, PassDisk, Report};

/// Why the charts could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// Creating the directory or writing a file (a full disk, a permission).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// plotters could not draw (its errors are generic over the backend).
    #[error("drawing: {0}")]
    Draw(String),
    /// Encoding the PNG in memory.
    #[error("PNG encoding: {0}")]
    Png(#[from] png::EncodingError),
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError::Draw(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, ChartError>;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const SIZE: (u32, u32) = (1000, 560);
const FLAGGED: RGBColor = RGBColor(214, 39, 40);
const FAST: RGBColor = RGBColor(44, 160, 44);
const HEALTHY: RGBColor = RGBColor(70, 110, 180);
/// Neither slow nor cleared: amber.
const UNSURE: RGBColor = RGBColor(230, 160, 20);

/// The PNG text needs a registered font; the SVG names it only.
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Something drawn on any backend.
trait Drawing {
    fn svg(&self, root: DrawingArea<SVGBackend, Shift>) -> Result<()>;
    fn png(&self, root: DrawingArea<BitMapBackend, Shift>) -> Result<()>;
}

/// A chart drawn both ways: its file stem, the SVG (for a page and for
/// charts/) and the PNG's bytes (for mail).
pub struct Drawn {
    pub stem: String,
    pub svg: String,
    pub png: Vec<u8>,
}

/// Every chart of the report: per pass, its speed, surface and latency.
pub fn draw_all(report: &Report) -> Result<Vec<Drawn>> {
    register_font();
    let mut out = Vec::new();
    for p in &report.passes {
        let pass = p.kind.name();
        let charts: [(String, &dyn Drawing); 3] = [
            (format!("speed-{pass}"), &Speed(report, p)),
            (format!("surface-{pass}"), &SurfaceChart(report, p)),
            (format!("latency-{pass}"), &Latency(report, p)),
        ];
        for (stem, chart) in charts {
            out.push(draw(stem, chart)?);
        }
    }
    out.extend(random_curves(report)?);
    out.extend(vibration_bars(report)?);
    Ok(out)
}

/// The random reads' latency curves, a chart per peer group (a model):
/// each disk's share of reads (%) answered within a latency, at depth 1
/// alone; the disks the random reads named in red.
fn random_curves(report: &Report) -> Result<Vec<Drawn>> {
    let Some(x) = &report.random else { return Ok(Vec::new()) };
    let mut groups: Vec<usize> = x.disks.iter().map(|d| d.peer_group).collect();
    groups.dedup();
    groups.sort_unstable();
    groups.dedup();
    let mut out = Vec::new();
    for g in groups {
        let disks: Vec<_> = x.disks.iter().filter(|d| d.peer_group == g).collect();
        // Up to the 99.9th percentile: the slowest few reads would squeeze
        // every curve against the axis.
        let series: Vec<Line> = (disks.iter())
            .filter_map(|d| {
                let f = d.alone.iter().find(|f| f.figures.depth == 1)?;
                let points = (f.cdf_us.iter().filter(|[pct, _]| *pct <= 99.9))
                    .map(|[pct, us]| (us / 1000.0, *pct))
                    .collect();
                let flagged = report.summary.random.iter().any(|r| r.path == d.path);
                Some(Line { label: d.path.clone(), points, flagged })
            })
            .collect();
        let x_max = series.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(0.0, f64::max);
        let model = report.disk(&disks[0].path).and_then(|d| d.identity.model.clone());
        let axes = Axes {
            x: "latency (ms)".into(),
            y: "% of reads within it (to 99.9)",
            x_max: x_max * 1.05,
            cut: false,
        };
        let of = model.map_or(format!("group {g}"), |m| format!("{m} (group {g})"));
        let caption = format!("Random reads at depth 1, alone: {of}");
        out.push(lines(&format!("random-latency-group{g}"), &caption, &axes, &series)?);
    }
    Ok(out)
}

/// The neighbour pass: each disk's loss (%) by its bay, the disks named in
/// red, the median down through them.
fn vibration_bars(report: &Report) -> Result<Vec<Drawn>> {
    let Some(x) = &report.vibration else { return Ok(Vec::new()) };
    let items: Vec<Bar> = (x.disks.iter())
        .filter_map(|d| {
            let label = d.bay.as_ref().map_or(d.path.clone(), |b| format!("{b} ({})", d.path));
            let named = report.summary.vibration.iter().any(|f| f.path == d.path);
            Some((label, d.loss_pct?, named))
        })
        .collect();
    let losses: Vec<f64> = items.iter().map(|i| i.1).collect();
    let caption = "Random reads lost while the neighbours seek, by bay";
    Ok(vec![bars_in("vibration-loss", caption, "% lost", &items, crate::stats::median(&losses))?])
}

/// Writes the charts into `dir` as `STEM.svg` and `STEM.png`.
pub fn write(dir: &Dir, charts: &[Drawn]) -> Result<()> {
    for c in charts {
        dir.write(&format!("{}.svg", c.stem), c.svg.as_bytes())?;
        dir.write(&format!("{}.png", c.stem), &c.png)?;
    }
    Ok(())
}

/// Draws `chart` as SVG and PNG.
fn draw(stem: String, chart: &dyn Drawing) -> Result<Drawn> {
    draw_sized(stem, chart, SIZE)
}

/// Draws `chart` as SVG and PNG, `size` pixels.
fn draw_sized(stem: String, chart: &dyn Drawing, size: (u32, u32)) -> Result<Drawn> {
    let mut svg = String::new();
    chart.svg(SVGBackend::with_string(&mut svg, size).into_drawing_area())?;
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    chart.png(BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area())?;
    Ok(Drawn { stem, svg, png: encode_png(&rgb, size)? })
}

/// The RGB pixels as a PNG file's bytes (encoded in memory, so the file is
/// written like every other output: atomically, its errors plain I/O ones).
fn encode_png(rgb: &[u8], size: (u32, u32)) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(rgb)?;
    Ok(out)
}

/// Implements [`Drawing`] for a type with a generic `draw`.
macro_rules! drawing {
    ($t:ident) => {
        impl Drawing for $t<'_> {
            fn svg(&self, root: DrawingArea<SVGBackend, Shift>) -> Result<()> {
                self.draw(root)
            }
            fn png(&self, root: DrawingArea<BitMapBackend, Shift>) -> Result<()> {
                self.draw(root)
            }
        }
    };
}

struct Speed<'a>(&'a Report, &'a Pass);
struct SurfaceChart<'a>(&'a Report, &'a Pass);
struct Latency<'a>(&'a Report, &'a Pass);
drawing!(Speed);
drawing!(SurfaceChart);
drawing!(Latency);

/// A bar chart: one bar per item, across, a row each (so many disks keep
/// their labels apart), red when marked, a reference line (the median)
/// down through them.
pub fn bars(stem: &str, caption: &str, items: &[Bar], reference: Option<f64>) -> Result<Drawn> {
    bars_in(stem, caption, "MB/s", items, reference)
}

/// [`bars`] of a value in `unit`.
pub fn bars_in(
    stem: &str,
    caption: &str,
    unit: &str,
    items: &[Bar],
    reference: Option<f64>,
) -> Result<Drawn> {
    register_font();
    let size = (SIZE.0, 130 + 26 * items.len().max(1) as u32);
    draw_sized(stem.to_string(), &Bars(caption, unit, items, reference), size)
}

/// One bar: its label, its length, and whether it is marked.
pub type Bar = (String, f64, bool);

struct Bars<'a>(&'a str, &'a str, &'a [Bar], Option<f64>);
drawing!(Bars);

impl Bars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (unit, items) = (self.1, self.2);
        let n = items.len().max(1) as i32;
        let top = items.iter().map(|i| i.1).fold(0.0, f64::max) * 1.2 + 1.0;
        // The first item on top.
        let row = |i: usize| n - 1 - i as i32;
        let widest = items.iter().map(|i| i.0.chars().count()).max().unwrap_or(4) as u32;
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(self.0, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size((widest * 8 + 20).clamp(60, 320))
            .build_cartesian_2d(0.0..top, (0..n - 1).into_segmented())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(unit)
            .y_labels(n as usize)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => {
                    items.get((n - 1 - *i) as usize).map(|x| x.0.clone()).unwrap_or_default()
                }
                _ => String::new(),
            })
            .draw()?;
        chart.draw_series(items.iter().enumerate().map(|(i, (_, v, flagged))| {
            let mut bar = Rectangle::new(
                [(0.0, SegmentValue::Exact(row(i))), (*v, SegmentValue::Exact(row(i) + 1))],
                if *flagged { FLAGGED } else { HEALTHY }.filled(),
            );
            bar.set_margin(3, 3, 0, 0);
            bar
        }))?;
        if let Some(m) = self.3 {
            chart
                .draw_series(LineSeries::new(
                    [(m, SegmentValue::Exact(0)), (m, SegmentValue::Last)],
                    BLACK.stroke_width(2),
                ))?
                .label(format!("median {m:.0} {unit}"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        }
        finish(&root, &mut chart, self.3.map(|_| SeriesLabelPosition::LowerRight))
    }
}

/// One line of a [`lines`] chart: a disk's MB/s at positions in % of its
/// range, red when `flagged`.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub flagged: bool,
}

/// What a [`lines`] chart's axes show: their words, where x ends, and
/// whether y is cut above the 95th percentile (a lucky spike).
pub struct Axes {
    pub x: String,
    pub y: &'static str,
    pub x_max: f64,
    pub cut: bool,
}

impl Axes {
    /// MB/s across the disks' surface, as the burn-in measures it.
    pub fn surface() -> Axes {
        Axes {
            x: "position in the range burned (%)".into(),
            y: "MB/s (cut at the top)",
            x_max: 100.0,
            cut: true,
        }
    }
}

/// A chart of lines, one per disk.
pub fn lines(stem: &str, caption: &str, axes: &Axes, series: &[Line]) -> Result<Drawn> {
    register_font();
    draw(stem.to_string(), &Lines(caption, axes, series))
}

struct Lines<'a>(&'a str, &'a Axes, &'a [Line]);
drawing!(Lines);

impl Lines<'_> {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        // As the check's surface chart: the axis ends above the 95th
        // percentile, a lucky spike is cut at the top.
        let (axes, series) = (self.1, self.2);
        let mut all: Vec<f64> = series.iter().flat_map(|l| l.points.iter().map(|p| p.1)).collect();
        all.sort_by(f64::total_cmp);
        let top = if axes.cut {
            all.get(all.len() * 95 / 100).copied().unwrap_or(0.0) * 1.3 + 1.0
        } else {
            all.last().copied().unwrap_or(0.0) * 1.15 + 1.0
        };
        let mut chart = frame(&root, self.0.to_string())?
            .build_cartesian_2d(0.0..axes.x_max.max(1e-9), 0.0..top)?;
        chart.configure_mesh().x_desc(axes.x.as_str()).y_desc(axes.y).draw()?;
        let legend = series.len() <= 12;
        for (i, l) in series.iter().enumerate() {
            let c = if l.flagged { FLAGGED } else { palette(i) };
            let width = if l.flagged { 3 } else { 1 };
            let points: Vec<(f64, f64)> = l.points.iter().map(|(x, y)| (*x, y.min(top))).collect();
            let series = chart.draw_series(LineSeries::new(points, c.stroke_width(width)))?;
            if legend {
                series.label(l.label.clone()).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], c.stroke_width(width))
                });
            }
        }
        finish(&root, &mut chart, legend.then_some(SeriesLabelPosition::LowerRight))
    }
}

/// Spans `(from, to, value)` as the points of a step line: each value level
/// across its span, joined upright to the next.
pub fn steps(spans: &[(f64, f64, f64)]) -> Vec<(f64, f64)> {
    spans.iter().flat_map(|(a, b, v)| [(*a, *v), (*b, *v)]).collect()
}

/// A disk's spread over its slices in MB/s on its bar: its interval's ends
/// over its median, times its bar (None without a spread).
fn spread_mb(d: &PassDisk) -> Option<(f64, f64)> {
    let (pct, lo, hi) = (d.pct_of_peers?, d.pct_of_peers_low?, d.pct_of_peers_high?);
    (pct > 0.0 && d.slices > Some(1))
        .then(|| (d.window_mb_per_s * lo / pct, d.window_mb_per_s * hi / pct))
}

/// The short name of a disk (`sdb`, `loop3`).
fn name(r: &Report, d: &PassDisk) -> String {
    r.disk(&d.path).map(|x| x.identity.name.clone()).unwrap_or_else(|| d.path.clone())
}

/// A bar's colour: red for a slow or failing disk.
fn bar_colour(d: &PassDisk) -> RGBColor {
    match d.verdict {
        Verdict::Slow | Verdict::Error => FLAGGED,
        Verdict::Fast => FAST,
        Verdict::Unsure => UNSURE,
        Verdict::Ok => HEALTHY,
    }
}

/// Disk `i`'s line colour: red for a slow or failing disk, otherwise one
/// of a palette (never the flagged red).
fn colour(d: &PassDisk, i: usize) -> RGBColor {
    match d.verdict {
        Verdict::Slow | Verdict::Error => FLAGGED,
        Verdict::Fast => FAST,
        Verdict::Unsure => UNSURE,
        Verdict::Ok => palette(i),
    }
}

/// Line `i`'s colour from a palette, never the flagged red.
fn palette(i: usize) -> RGBColor {
    let c = Palette99::pick(i + 1).to_rgba();
    if c.0 > 180 && c.1 < 90 { HEALTHY } else { RGBColor(c.0, c.1, c.2) }
}

fn title(p: &Pass, what: &str) -> String {
    let pass = match p.kind {
        PassKind::Serial => "Serial pass",
        PassKind::Parallel => "Parallel pass",
        PassKind::Seek => "Seek-stress pass",
    };
    format!("{pass}: {what} (red: flagged)")
}

/// Draws the legend (when there is one) and finishes the picture.
fn finish<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut ChartContext<'a, DB, CT>,
    legend: Option<SeriesLabelPosition>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if let Some(position) = legend {
        chart
            .configure_series_labels()
            .position(position)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// A white picture with a title and room for the axes' labels.
fn frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    caption: String,
) -> Result<ChartBuilder<'a, 'a, DB>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let mut b = ChartBuilder::on(root);
    b.caption(caption, ("sans-serif", 22)).margin(15).x_label_area_size(50).y_label_area_size(70);
    Ok(b)
}

impl Speed<'_> {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (r, p) = (self.0, self.1);
        let n = p.disks.len().max(1);
        let serial = r.passes.iter().find(|x| x.kind == PassKind::Serial);
        let solo = |d: &PassDisk| {
            serial
                .filter(|_| p.kind != PassKind::Serial)
                .and_then(|s| s.disks.iter().find(|x| x.path == d.path))
                .map(|x| x.window_mb_per_s)
        };
        let top = p
            .disks
            .iter()
            .flat_map(|d| [Some(d.window_mb_per_s), solo(d), spread_mb(d).map(|s| s.1)])
            .flatten()
            .fold(0.0, f64::max)
            * 1.2
            + 1.0;
        let names: Vec<String> = p.disks.iter().map(|d| name(r, d)).collect();
        let what = if p.slices.is_empty() {
            "MB/s per disk"
        } else {
            "MB/s per disk, whiskers: spread over slices"
        };
        let mut chart = frame(&root, title(p, what))?
            .build_cartesian_2d((0..n as i32 - 1).into_segmented(), 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc("MB/s")
            .x_labels(n)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()?;
        chart.draw_series(p.disks.iter().enumerate().map(|(i, d)| {
            let i = i as i32;
            let mut bar = Rectangle::new(
                [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), d.window_mb_per_s)],
                bar_colour(d).filled(),
            );
            bar.set_margin(0, 0, 8, 8);
            bar
        }))?;
        // A sliced serial pass: each disk's spread over its slices, as a
        // whisker on its bar.
        chart.draw_series(p.disks.iter().enumerate().filter_map(|(i, d)| {
            let (lo, hi) = spread_mb(d)?;
            let at = || SegmentValue::CenterOf(i as i32);
            Some(PathElement::new([(at(), lo), (at(), hi)], BLACK.stroke_width(3)))
        }))?;
        if let Some(m) = p.median_mb_per_s {
            chart
                .draw_series(LineSeries::new(
                    [(SegmentValue::Exact(0), m), (SegmentValue::Last, m)],
                    BLACK.stroke_width(2),
                ))?
                .label(format!("array median {m:.0} MB/s"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        }
        if p.kind != PassKind::Serial && p.disks.iter().any(|d| solo(d).is_some()) {
            chart
                .draw_series(p.disks.iter().enumerate().filter_map(|(i, d)| {
                    let s = solo(d)?;
                    let i = i as i32;
                    Some(PathElement::new(
                        [(SegmentValue::Exact(i), s), (SegmentValue::Exact(i + 1), s)],
                        RGBColor(90, 90, 90).stroke_width(3),
                    ))
                }))?
                .label("the disk's serial speed")
                .legend(|(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], RGBColor(90, 90, 90).stroke_width(3))
                });
        }
        finish(&root, &mut chart, Some(SeriesLabelPosition::UpperRight))
    }
}

impl SurfaceChart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (r, p) = (self.0, self.1);
        // A bucket holding one lucky read (a cache hit, a throttle's burst)
        // can read at 50x the rest: the axis ends above the 95th percentile
        // and such spikes are cut at the top edge.
        let mut all: Vec<f64> =
            p.disks.iter().flat_map(|d| d.surface.mb_per_s.iter().flatten().copied()).collect();
        all.sort_by(f64::total_cmp);
        let p95 = all.get(all.len() * 95 / 100).copied().unwrap_or(0.0);
        let top = p95 * 1.3 + 1.0;
        // The seek pass's readers share each disk: a bucket's speed is one
        // reader's, never the disk's (the table's MB/s sums them).
        let (what, y) = match (p.kind, r.options.seek_readers) {
            (PassKind::Seek, Some(n)) => (
                format!("MB/s of one reader of {n} across the disk (the table sums them)"),
                "MB/s of one reader (cut at the top)",
            ),
            _ => ("MB/s across the disk".to_string(), "MB/s (cut at the top)"),
        };
        let mut chart = frame(&root, title(p, &what))?.build_cartesian_2d(0.0..100.0, 0.0..top)?;
        chart.configure_mesh().x_desc("position on the disk (% of its size)").y_desc(y).draw()?;
        for d in &p.disks {
            let size = r.disk(&d.path).map_or(1, |x| x.identity.size_bytes.max(1));
            chart.draw_series(d.slow_regions.iter().map(|g| {
                let at = |b: u64| 100.0 * b as f64 / size as f64;
                Rectangle::new(
                    [(at(g.start_byte), 0.0), (at(g.end_byte), top)],
                    FLAGGED.mix(0.15).filled(),
                )
            }))?;
        }
        let legend = p.disks.len() <= 12;
        for (i, d) in p.disks.iter().enumerate() {
            let n = d.surface.buckets.max(1) as f64;
            let c = colour(d, i);
            let width = if c == FLAGGED { 3 } else { 1 };
            // A step per bucket read (its speed across its width: two
            // buckets never make a slope); a gap where none was.
            let mut segments: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new()];
            for (b, v) in d.surface.mb_per_s.iter().enumerate() {
                let (x0, x1) = (100.0 * b as f64 / n, 100.0 * (b + 1) as f64 / n);
                match (v, segments.last_mut()) {
                    (Some(v), Some(s)) => s.push((x0, x1, v.min(top))),
                    _ => segments.push(Vec::new()),
                }
            }
            let mut labelled = false;
            for s in segments.into_iter().filter(|s| !s.is_empty()) {
                let series =
                    chart.draw_series(LineSeries::new(steps(&s), c.stroke_width(width)))?;
                if legend && !labelled {
                    labelled = true;
                    series.label(name(r, d)).legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], c.stroke_width(width))
                    });
                }
            }
            // Read, but no bucket with reads enough to be a speed: named,
            // with why there is no line.
            if legend && !labelled {
                chart
                    .draw_series(LineSeries::new(Vec::<(f64, f64)>::new(), c))?
                    .label(format!("{} (too few reads per bucket to draw)", name(r, d)))
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c));
            }
        }
        finish(&root, &mut chart, legend.then_some(SeriesLabelPosition::LowerRight))
    }
}

impl Latency<'_> {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        const BINS: [&str; 6] = ["<3 ms", "<10 ms", "<50 ms", "<150 ms", "<500 ms", ">=500 ms"];
        // The log axis's bottom, where a bin without reads is drawn.
        const FLOOR: f64 = 0.5;
        let (r, p) = (self.0, self.1);
        let counts = |d: &PassDisk| d.latency_bins.counts();
        let top = p.disks.iter().flat_map(counts).max().unwrap_or(1).max(1) as f64 * 3.0;
        let mut chart = frame(&root, title(p, "reads per latency bin"))?
            .build_cartesian_2d((0..5).into_segmented(), (FLOOR..top).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("read latency (MHDD bins)")
            .y_desc("reads (none: drawn at the bottom)")
            .x_labels(6)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => BINS.get(*i as usize).copied().unwrap_or("").into(),
                _ => String::new(),
            })
            .draw()?;
        let legend = p.disks.len() <= 12;
        for (i, d) in p.disks.iter().enumerate() {
            let c = colour(d, i);
            let points: Vec<(SegmentValue<i32>, f64)> = counts(d)
                .iter()
                .enumerate()
                .map(|(b, n)| (SegmentValue::CenterOf(b as i32), (*n as f64).max(FLOOR)))
                .collect();
            chart.draw_series(points.iter().map(|pt| Circle::new(pt.clone(), 4, c.filled())))?;
            let series = chart.draw_series(LineSeries::new(points, c.stroke_width(2)))?;
            if legend {
                series.label(name(r, d)).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2))
                });
            }
        }
        finish(&root, &mut chart, legend.then_some(SeriesLabelPosition::UpperRight))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn steps_hold_each_level_across_its_span() {
        let s = super::steps(&[(0.0, 50.0, 10.0), (50.0, 100.0, 20.0)]);
        assert_eq!(s, [(0.0, 10.0), (50.0, 10.0), (50.0, 20.0), (100.0, 20.0)]);
        assert_eq!(super::steps(&[(0.0, 100.0, 5.0)]), [(0.0, 5.0), (100.0, 5.0)]);
    }

    #[test]
    fn the_seek_pass_surface_says_it_is_one_readers_speed() {
        let mut r = crate::report::fixture("remeasured");
        r.passes[1].kind = crate::measure::PassKind::Seek;
        r.options.seek_readers = Some(6);
        let drawn = super::draw_all(&r).unwrap();
        let seek = drawn.iter().find(|d| d.stem == "surface-seek").expect("drawn");
        assert!(seek.svg.contains("MB/s of one reader of 6 across the disk"), "{}", seek.svg);
        let serial = drawn.iter().find(|d| d.stem == "surface-serial").expect("drawn");
        assert!(!serial.svg.contains("one reader"));
    }

    #[test]
    fn bars_draw() {
        let items = vec![("a".to_string(), 10.0, false), ("b".to_string(), 5.0, true)];
        let drawn = super::bars("s", "cap", &items, Some(7.0)).unwrap();
        assert!(drawn.svg.contains("<svg") && drawn.png.starts_with(b"\x89PNG"));
    }
}
