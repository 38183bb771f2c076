//! Reporting for `shamba-lab exp`: tables with the seed's figure beside ours, printed as text
//! or JSON, written as CSV, and SVG plots, all under the output directory.
//!
//! Every experiment builds a [`Report`] (tables + plots + notes) and calls
//! [`Report::emit`]; nothing here knows about filters, so engine experiments reuse it.

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde_json::{json, Map, Value};

use crate::args::ExpArgs;

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text (names, labels).
    Text(String),
    /// A number printed with `decimals` digits after the point.
    Num(f64, usize),
    /// No value (the seed has no figure for this row).
    Missing,
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// A number cell.
    pub fn num(v: f64, decimals: usize) -> Cell {
        if v.is_finite() {
            Cell::Num(v, decimals)
        } else {
            Cell::Missing
        }
    }

    /// A number cell or missing.
    pub fn opt(v: Option<f64>, decimals: usize) -> Cell {
        v.map_or(Cell::Missing, |v| Cell::num(v, decimals))
    }

    fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Num(v, d) => format!("{v:.d$}", d = *d),
            Cell::Missing => "-".to_string(),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Cell::Text(s) => json!(s),
            Cell::Num(v, _) => json!(v),
            Cell::Missing => Value::Null,
        }
    }
}

/// A table: by convention the seed's figures are in columns whose name starts with
/// "seed" and ours in columns starting with "ours".
#[derive(Debug, Clone)]
pub struct Table {
    /// File stem (CSV name) and JSON key.
    pub name: String,
    /// Printed above the table.
    pub title: String,
    /// Column names.
    pub headers: Vec<String>,
    /// Rows, each as long as `headers`.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table.
    pub fn new(name: &str, title: &str, headers: &[&str]) -> Table {
        Table {
            name: name.to_string(),
            title: title.to_string(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Append a row (padded or cut to the header width).
    pub fn row(&mut self, mut cells: Vec<Cell>) {
        cells.resize(self.headers.len(), Cell::Missing);
        self.rows.push(cells);
    }

    /// Aligned text.
    pub fn render(&self) -> String {
        let cells: Vec<Vec<String>> = self.rows.iter().map(|r| r.iter().map(Cell::render).collect()).collect();
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| cells.iter().map(|r| r[c].len()).chain(std::iter::once(self.headers[c].len())).max().unwrap_or(0))
            .collect();
        let mut out = format!("{}\n", self.title);
        let line = |out: &mut String, vals: &[String]| {
            for (i, (v, w)) in vals.iter().zip(&widths).enumerate() {
                if i == 0 {
                    let _ = write!(out, "{v:<w$}");
                } else {
                    let _ = write!(out, "  {v:>w$}");
                }
            }
            out.push('\n');
        };
        line(&mut out, &self.headers);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        line(&mut out, &rule);
        for r in &cells {
            line(&mut out, r);
        }
        out
    }

    /// CSV with a header line.
    pub fn to_csv(&self) -> String {
        let esc = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = self.headers.iter().map(|h| esc(h)).collect::<Vec<_>>().join(",");
        out.push('\n');
        for r in &self.rows {
            let vals: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::Missing => String::new(),
                    Cell::Num(v, _) => format!("{v}"),
                    Cell::Text(s) => esc(s),
                })
                .collect();
            out.push_str(&vals.join(","));
            out.push('\n');
        }
        out
    }

    /// Rows as JSON objects keyed by column name.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let m: Map<String, Value> = self.headers.iter().cloned().zip(r.iter().map(Cell::to_json)).collect();
                Value::Object(m)
            })
            .collect();
        json!({ "title": self.title, "rows": rows })
    }
}

/// One line of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points in data units.
    pub points: Vec<(f64, f64)>,
}

/// A line plot (log axes are drawn as log10 of the values).
#[derive(Debug, Clone)]
pub struct Plot {
    /// File stem.
    pub name: String,
    /// Caption.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Log10 x axis.
    pub log_x: bool,
    /// Log10 y axis.
    pub log_y: bool,
    /// Lines.
    pub series: Vec<Series>,
}

impl Plot {
    /// An empty plot.
    pub fn new(name: &str, title: &str, x_label: &str, y_label: &str) -> Plot {
        Plot {
            name: name.to_string(),
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            log_x: false,
            log_y: false,
            series: Vec::new(),
        }
    }

    /// Use log10 axes.
    pub fn log(mut self, x: bool, y: bool) -> Plot {
        self.log_x = x;
        self.log_y = y;
        self
    }

    /// Add a line.
    pub fn series(&mut self, name: &str, points: Vec<(f64, f64)>) {
        self.series.push(Series { name: name.to_string(), points });
    }

    /// Draw as SVG.
    pub fn write_svg(&self, path: &Path) -> Result<(), Box<dyn Error>> {
        let tx = |v: f64| if self.log_x { v.max(1e-300).log10() } else { v };
        let ty = |v: f64| if self.log_y { v.max(1e-300).log10() } else { v };
        let pts: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|s| {
                s.points.iter().filter(|p| p.0.is_finite() && p.1.is_finite()).map(|&(x, y)| (tx(x), ty(y))).collect()
            })
            .collect();
        let all: Vec<&(f64, f64)> = pts.iter().flatten().collect();
        let bounds = |f: fn(&(f64, f64)) -> f64| {
            let lo = all.iter().map(|p| f(p)).fold(f64::INFINITY, f64::min);
            let hi = all.iter().map(|p| f(p)).fold(f64::NEG_INFINITY, f64::max);
            if !lo.is_finite() || !hi.is_finite() {
                (0.0, 1.0)
            } else if (hi - lo).abs() < 1e-12 {
                (lo - 0.5, hi + 0.5)
            } else {
                let pad = (hi - lo) * 0.05;
                (lo - pad, hi + pad)
            }
        };
        let (x0, x1) = bounds(|p| p.0);
        let (y0, y1) = bounds(|p| p.1);
        let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let lx = if self.log_x { format!("log10 {}", self.x_label) } else { self.x_label.clone() };
        let ly = if self.log_y { format!("log10 {}", self.y_label) } else { self.y_label.clone() };
        chart.configure_mesh().x_desc(lx).y_desc(ly).draw()?;
        for (i, (s, p)) in self.series.iter().zip(&pts).enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            chart.draw_series(p.iter().map(|&(x, y)| Circle::new((x, y), 3, color.filled())))?;
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
        root.present()?;
        Ok(())
    }
}

/// Everything one experiment produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// Experiment name (file prefix).
    pub name: String,
    /// Tables, printed in order.
    pub tables: Vec<Table>,
    /// Plots.
    pub plots: Vec<Plot>,
    /// Free-text notes printed after the tables (setup, caveats, bars).
    pub notes: Vec<String>,
}

impl Report {
    /// An empty report.
    pub fn new(name: &str) -> Report {
        Report { name: name.to_string(), tables: Vec::new(), plots: Vec::new(), notes: Vec::new() }
    }

    /// Add a note line.
    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }

    /// Write CSVs and SVGs under `args.out`, then print tables (or one JSON object).
    pub fn emit(&self, args: &ExpArgs) -> Result<(), Box<dyn Error>> {
        std::fs::create_dir_all(&args.out)?;
        let mut files: Vec<PathBuf> = Vec::new();
        for t in &self.tables {
            let p = args.out.join(format!("{}-{}.csv", self.name, t.name));
            std::fs::write(&p, t.to_csv())?;
            files.push(p);
        }
        for pl in &self.plots {
            let p = args.out.join(format!("{}-{}.svg", self.name, pl.name));
            pl.write_svg(&p)?;
            files.push(p);
        }
        if args.json {
            let tables: Map<String, Value> = self.tables.iter().map(|t| (t.name.clone(), t.to_json())).collect();
            let v = json!({
                "experiment": self.name,
                "quick": args.quick,
                "tables": tables,
                "notes": self.notes,
                "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        } else {
            for t in &self.tables {
                println!("{}", t.render());
            }
            for n in &self.notes {
                println!("note: {n}");
            }
            for f in &files {
                println!("wrote {}", f.display());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_text_have_every_row() {
        let mut t = Table::new("t", "T", &["name", "seed", "ours"]);
        t.row(vec![Cell::text("a,b"), Cell::num(1.5, 2), Cell::Missing]);
        assert_eq!(t.to_csv(), "name,seed,ours\n\"a,b\",1.5,\n");
        assert!(t.render().contains("1.50"));
        assert_eq!(t.to_json()["rows"][0]["ours"], Value::Null);
    }

    #[test]
    fn svg_plot_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Plot::new("p", "P", "x", "y").log(true, true);
        p.series("s", vec![(1.0, 10.0), (10.0, 100.0)]);
        let path = dir.path().join("p.svg");
        p.write_svg(&path).unwrap();
        assert!(std::fs::read_to_string(path).unwrap().contains("<svg"));
    }
}
