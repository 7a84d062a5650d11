//! One way to publish a run, the check's, the burn-in's and the fleet's:
//! its text printed, its `--json` written, its `--out` bundle made (the
//! result first, then the page and the charts, so a chart that cannot be
//! drawn never costs the result), with one policy for a file that cannot
//! be written: one line naming it, and the run's verdict and exit status
//! stand. The bundle's file names are one table, `output::bundle`.

use std::path::Path;

use anyhow::Context;

use super::chart::Drawn;
use crate::device::topology::Topology;
use crate::notify::{Event, Notifier};
use crate::outcome::Outcome;
use crate::output::bundle::{CHARTS, CSV, JSON, MARKDOWN, PAGE, TEXT};
use crate::output::{Dir, Output, Outputs};
use crate::rundoc::Document;
use crate::stop::StopFlag;

/// Files of a bundle: each name (from the table above) and its bytes.
pub type Files = Vec<(&'static str, Vec<u8>)>;

/// A run's result, as its outputs take it.
pub trait Published: Document {
    /// Its header, to mark the run's end in it.
    fn header_mut(&mut self) -> &mut crate::header::Header;
    /// The report laid out as blocks (its text, Markdown and page).
    fn blocks(&self) -> Vec<super::doc::Block>;
    /// The text report, every line whole.
    fn text(&self) -> String {
        super::doc::text(&self.blocks())
    }
    /// The JSON document.
    fn json(&self) -> Vec<u8>;
    /// The bundle's files that hold the result (written first).
    fn files(&self) -> Files;
    /// The `--csv` document, where the run has one.
    fn csv(&self) -> Option<Vec<u8>> {
        None
    }
    /// The page and the files that show the charts, and the charts
    /// (written last, and only by the last save).
    fn pages(&self) -> anyhow::Result<(Files, Vec<Drawn>)>;
    /// The Prometheus metrics (`--metrics`).
    fn metrics(&self) -> Vec<u8>;
    /// The OCP diag stream (`--ocp-diag`), where the run has one.
    fn ocp(&self) -> Option<Vec<u8>> {
        None
    }
    /// The report with more (`-v`), where the run has more to say.
    fn verbose_blocks(&self) -> Vec<super::doc::Block> {
        self.blocks()
    }
}

/// Writes the `--out` bundle in `dir` (made if missing): the result's
/// files, and where `last`, the pages and the charts.
pub fn bundle(run: &impl Published, dir: &Path, last: bool) -> anyhow::Result<()> {
    let dir = Dir::create(dir)?;
    let write = |name: &str, bytes: &[u8]| dir.write(name, bytes).with_context(|| name.to_string());
    for (name, bytes) in run.files() {
        write(name, &bytes)?;
    }
    if last {
        let (pages, drawn) = run.pages().context(CHARTS)?;
        for (name, bytes) in pages {
            write(name, &bytes)?;
        }
        // No charts/ where there is none (a fleet of burn-ins).
        if !drawn.is_empty() {
            let charts = dir.sub(CHARTS).context(CHARTS)?;
            super::chart::write(&charts, &drawn).context(CHARTS)?;
        }
    }
    Ok(())
}

/// Writes `--out` and `--json` (`last`: the run's end; a FIFO, a terminal
/// and standard output are written only then). What cannot be written is
/// returned, a line each naming it; the caller says it.
pub fn save(run: &impl Published, to: Outputs, last: bool, stop: &StopFlag) -> Vec<String> {
    let mut failed = Vec::new();
    if let Some(dir) = to.out
        && let Err(e) = bundle(run, dir, last)
    {
        failed.push(format!("--out {}: {e:#}", dir.display()));
    }
    let metrics = to.metrics.map(|_| run.metrics());
    let ocp = to.ocp.and_then(|_| run.ocp());
    // Should this process be killed before the next save, the one that
    // waits for it marks these killed; the last save is the run's own
    // result, which nothing marks.
    let json_file = to.json.and_then(Output::file).filter(|_| !last);
    let ocp_tail =
        to.ocp.and_then(Output::file).filter(|_| !last).zip(ocp.as_ref()).map(|(p, b)| {
            let lines = b.iter().filter(|c| **c == b'\n').count() as u64;
            (p, super::ocp::killed_tail(lines))
        });
    let docs =
        [(to.json, Some(run.json())), (to.csv, run.csv()), (to.metrics, metrics), (to.ocp, ocp)];
    for (o, bytes) in docs.into_iter().filter_map(|(o, b)| Some((o?, b?))) {
        if last && o.is_fifo() {
            // Said before the wait: the run is done, its disks still held.
            let most = crate::output::SPECIAL_WAIT.as_secs();
            tell!(
                "arrayburn: {} {}: a FIFO: waiting up to {most} s for a reader to take the result (a stop gives up; the run is done)",
                o.flag,
                o.given.display()
            );
        }
        if let Err(e) = o.write(&bytes, last, stop) {
            failed.push(format!("{} {}: {e}", o.flag, o.given.display()));
        }
    }
    let ocp = ocp_tail.as_ref().map(|(p, t)| (p.as_path(), t.as_slice()));
    crate::supervisor::saved(json_file.as_deref(), ocp);
    failed
}

/// Prints the text report: on standard output, or on standard error where
/// `stdout_taken` (`--json -` has it). A closed pipe is not a failure.
pub fn print(run: &impl Published, stdout_taken: bool) {
    use std::io::IsTerminal;
    // `-q`: the verdict line alone (the run's log still gets the report).
    // Control characters as escapes (a device path's), before any colour
    // is added.
    // The log gets every line whole; a terminal, the report laid out in
    // its width (a file or a pipe: whole lines too).
    let blocks = if crate::tell::verbose() { run.verbose_blocks() } else { run.blocks() };
    let full = crate::escape::lines(&super::doc::text(&blocks));
    let (terminal, width) = if stdout_taken {
        (std::io::stderr().is_terminal(), crate::width::of_stderr())
    } else {
        (std::io::stdout().is_terminal(), crate::width::of_stdout())
    };
    let text = if crate::tell::quiet() {
        // `-q`: the verdict's headline and its disks to act on, as the
        // report's closing lines say them.
        crate::escape::lines(&super::doc::text_in(&super::doc::quiet(&blocks), width))
    } else if width.is_some() {
        crate::escape::lines(&super::doc::text_in(&blocks, width))
    } else {
        full.clone()
    };
    let shown =
        if crate::tell::colour(terminal) { super::doc::coloured(&text) } else { text.clone() };
    crate::tell::report(&full, &shown, stdout_taken);
}

/// A disk's topology by its path (`--locate` lights its bay).
pub type Bays<'a> = dyn Fn(&str) -> Option<&'a Topology> + 'a;
/// Keeps a run's JSON document somewhere first.
pub type Keep<'a> = dyn Fn(&[u8]) + 'a;

/// What a run's end does beside printing and saving it, for every command
/// alike.
pub struct Ending<'a> {
    /// The command, as its lines name it (`arrayburn burnin`).
    pub who: &'a str,
    /// The `--notify` event's word (`check`, `burnin`, `report`).
    pub event: &'static str,
    /// Who is told of the end (`--notify`).
    pub notify: Option<&'a Notifier>,
    /// With `--locate`: a disk's topology by its path, to light its bay.
    pub locate: Option<&'a Bays<'a>>,
    /// Where the JSON document is kept before anything else is written
    /// (the burn-in's `STATE/runs/RUN.json`: no terminal, pipe or output
    /// directory that went away can lose it).
    pub keep: Option<&'a Keep<'a>>,
    /// Copies were saved while the run went on (the check's, after each
    /// pass): a file that cannot be written now says so.
    pub saved_before: bool,
    /// `--record`: where the run's measurements go, and their document,
    /// written with the other files.
    pub record: Option<(&'a crate::output::Output, Vec<u8>)>,
}

impl<'a> Ending<'a> {
    /// The end of `who`'s run, told to `notify` as `event`, nothing more.
    pub fn of(who: &'a str, event: &'static str, notify: Option<&'a Notifier>) -> Self {
        Ending { who, event, notify, locate: None, keep: None, saved_before: false, record: None }
    }
}

/// A run's end, the one way every command ends: its end marked in its
/// document, the document kept, the text printed, the files saved (its
/// `--record` among them; a file
/// that cannot be written said in one line), `--notify` told last and
/// `--locate`'s LEDs lit; its outcome as its run document says. A second
/// signal waits for the files to be written.
pub fn publish(run: &mut impl Published, to: Outputs, end: &Ending, stop: &StopFlag) -> Outcome {
    ended(run);
    let document = run.json();
    if let Some(keep) = end.keep {
        keep(&document);
    }
    print(run, to.stdout_taken());
    let failed = {
        let _hold = stop.hold();
        let mut failed = save(run, to, true, stop);
        if let Some((o, bytes)) = &end.record
            && let Err(e) = o.write(bytes, true, stop)
        {
            failed.push(format!("{} {}: {e}", o.flag, o.given.display()));
        }
        failed
    };
    let earlier = if end.saved_before {
        "; any JSON copy left from an earlier pass says \"complete\": false"
    } else {
        ""
    };
    for f in failed {
        tell!("{}: error: could not write {f} (the printed report is complete{earlier})", end.who);
    }
    let doc = run.document();
    if let Some(n) = end.notify {
        n.send_last(&Event::end(end.event, &doc, document), stop);
    }
    if let Some(topology) = end.locate {
        let acts = doc.to_act_on.iter().map(|a| (a.path.as_str(), a.action.as_str()));
        crate::device::led::light(acts, topology, end.who);
    }
    doc.outcome
}

/// Marks the run's end in its document: the exit status its outcome
/// gives, so that a result read after the terminal has gone still says how
/// the run ended.
pub fn ended(run: &mut impl Published) {
    let code = run.document().outcome.exit_code();
    run.header_mut().exit_status = Some(code);
}

/// A run laid out as blocks: its text, its JSON and its Markdown.
fn laid_out(blocks: &[super::doc::Block], json: Vec<u8>) -> Files {
    let (text, md) = (super::doc::text(blocks), super::doc::markdown(blocks));
    vec![(TEXT, text.into_bytes()), (JSON, json), (MARKDOWN, md.into_bytes())]
}

impl Published for crate::report::Report {
    fn header_mut(&mut self) -> &mut crate::header::Header {
        &mut self.header
    }
    fn blocks(&self) -> Vec<super::doc::Block> {
        super::text::blocks(self)
    }
    fn json(&self) -> Vec<u8> {
        super::json::render(self)
    }
    fn files(&self) -> Files {
        let text = self.text().into_bytes();
        vec![(TEXT, text), (JSON, self.json()), (CSV, super::csv::render(self))]
    }
    fn csv(&self) -> Option<Vec<u8>> {
        Some(super::csv::render(self))
    }
    fn metrics(&self) -> Vec<u8> {
        super::metrics::check(self).render().into_bytes()
    }
    fn ocp(&self) -> Option<Vec<u8>> {
        Some(super::ocp::check(self))
    }
    fn verbose_blocks(&self) -> Vec<super::doc::Block> {
        super::text::verbose_blocks(self)
    }
    fn pages(&self) -> anyhow::Result<(Files, Vec<Drawn>)> {
        let drawn = super::chart::draw_all(self)?;
        let blocks = super::text::blocks(self);
        let md = super::doc::markdown(&blocks).into_bytes();
        let page = super::page::check(self, &blocks, &drawn).into_bytes();
        Ok((vec![(MARKDOWN, md), (PAGE, page)], drawn))
    }
}

impl Published for crate::report::burnin::BurnReport {
    fn header_mut(&mut self) -> &mut crate::header::Header {
        &mut self.header
    }
    fn blocks(&self) -> Vec<super::doc::Block> {
        super::burnin::blocks(self)
    }
    fn json(&self) -> Vec<u8> {
        super::burnin::json(self)
    }
    fn files(&self) -> Files {
        laid_out(&super::burnin::blocks(self), self.json())
    }
    fn metrics(&self) -> Vec<u8> {
        super::metrics::burnin(self).render().into_bytes()
    }
    fn ocp(&self) -> Option<Vec<u8>> {
        Some(super::ocp::burnin(self))
    }
    fn pages(&self) -> anyhow::Result<(Files, Vec<Drawn>)> {
        let drawn = super::burnin::charts(self)?;
        let blocks = super::burnin::blocks(self);
        let page = super::burnin::page(self, &blocks, &drawn).into_bytes();
        Ok((vec![(PAGE, page)], drawn))
    }
}

impl Published for crate::fleet::FleetReport {
    fn header_mut(&mut self) -> &mut crate::header::Header {
        &mut self.header
    }
    fn blocks(&self) -> Vec<super::doc::Block> {
        super::fleet::blocks(self)
    }
    fn json(&self) -> Vec<u8> {
        super::json::document(self)
    }
    fn files(&self) -> Files {
        laid_out(&super::fleet::blocks(self), self.json())
    }
    fn metrics(&self) -> Vec<u8> {
        super::metrics::fleet(self).render().into_bytes()
    }
    fn pages(&self) -> anyhow::Result<(Files, Vec<Drawn>)> {
        let drawn = super::fleet::charts(self)?;
        let page = super::fleet::page(self, &super::fleet::blocks(self), &drawn).into_bytes();
        Ok((vec![(PAGE, page)], drawn))
    }
}

impl Published for crate::report::inspect::InspectReport {
    fn header_mut(&mut self) -> &mut crate::header::Header {
        &mut self.header
    }
    fn blocks(&self) -> Vec<super::doc::Block> {
        super::inspect::blocks(self)
    }
    fn json(&self) -> Vec<u8> {
        super::json::document(self)
    }
    fn files(&self) -> Files {
        laid_out(&super::inspect::blocks(self), self.json())
    }
    fn metrics(&self) -> Vec<u8> {
        super::inspect::metrics(self).render().into_bytes()
    }
    fn ocp(&self) -> Option<Vec<u8>> {
        Some(super::ocp::inspect(self))
    }
    fn pages(&self) -> anyhow::Result<(Files, Vec<Drawn>)> {
        let page = super::inspect::page(self, &super::inspect::blocks(self)).into_bytes();
        Ok((vec![(PAGE, page)], Vec::new()))
    }
}
