//! The size sweep's plot: empty-lookup CPU ns against the levels holding files, one line
//! per engine, a point per size.

use crate::engine::Variant;
use crate::workload::sizes::SizePoint;
use plotters::prelude::*;
use std::error::Error;
use std::path::Path;

/// The points of one engine as (levels, empty-lookup CPU ns), in size order.
fn series(points: &[SizePoint], engine: Variant) -> Vec<(f64, f64)> {
    let mut mine: Vec<&SizePoint> = points.iter().filter(|p| p.engine == engine).collect();
    mine.sort_by_key(|p| p.keys);
    mine.iter().map(|p| (p.levels as f64, p.empty.cpu_ns)).collect()
}

/// Draw empty-lookup CPU ns against levels, one line per engine, as SVG at `path`.
pub fn plot(points: &[SizePoint], path: &Path) -> Result<(), Box<dyn Error + Send + Sync>> {
    draw(points, path).map_err(|e| e.to_string().into())
}

fn draw(points: &[SizePoint], path: &Path) -> Result<(), Box<dyn Error>> {
    let mut engines: Vec<Variant> = Vec::new();
    for p in points {
        if !engines.contains(&p.engine) {
            engines.push(p.engine);
        }
    }
    let x_max = points.iter().map(|p| p.levels).max().unwrap_or(1) as f64 + 0.5;
    let x_min = points.iter().map(|p| p.levels).min().unwrap_or(0) as f64 - 0.5;
    let y_max = points.iter().map(|p| p.empty.cpu_ns).fold(0.0, f64::max) * 1.15 + 1.0;
    let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Empty lookup, client CPU ns, against levels (filters in memory)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)?;
    // Levels are whole numbers: one label per level, none between.
    let x_labels = (x_max - x_min).round() as usize;
    chart
        .configure_mesh()
        .x_labels(x_labels)
        .x_label_formatter(&|x| if x.fract().abs() < 1e-9 { format!("{x:.0}") } else { String::new() })
        .x_desc("levels holding files")
        .y_desc("CPU ns per empty lookup")
        .draw()?;
    for (i, e) in engines.iter().enumerate() {
        let pts = series(points, *e);
        let color = Palette99::pick(i).to_rgba();
        let keys: Vec<String> =
            points.iter().filter(|p| p.engine == *e).map(|p| format!("{}M", p.keys as f64 / 1e6)).collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(format!("{} ({})", e.name(), keys.join(", ")))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sizes::Cost;

    fn point(engine: Variant, keys: u64, levels: usize, cpu_ns: f64) -> SizePoint {
        let cost = Cost { cpu_ns, ns: cpu_ns, blocks: 0.0, found: 0.0 };
        SizePoint {
            engine,
            keys,
            load_ops_per_sec: 1.0,
            settle_seconds: 0.0,
            files_per_level: vec![0; levels],
            levels,
            filter_bytes: 0,
            metadata_bytes: 0,
            disk_bytes: 0,
            peak_rss_bytes: 0,
            rss_growth_bytes: 0,
            empty: cost,
            existing: cost,
            empty_under_pressure: vec![(10, cost)],
        }
    }

    #[test]
    fn a_series_is_one_engine_in_size_order() {
        let pts = vec![
            point(Variant::Shamba, 20, 4, 300.0),
            point(Variant::Rocksdb, 2, 3, 250.0),
            point(Variant::Shamba, 2, 3, 200.0),
        ];
        assert_eq!(series(&pts, Variant::Shamba), vec![(3.0, 200.0), (4.0, 300.0)]);
        assert_eq!(series(&pts, Variant::Rocksdb), vec![(3.0, 250.0)]);
    }

    #[test]
    fn the_plot_is_written_as_svg() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.svg");
        plot(&[point(Variant::Shamba, 2, 3, 200.0), point(Variant::Shamba, 20, 4, 300.0)], &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("shamba"), "{}", &svg[..svg.len().min(200)]);
    }
}
