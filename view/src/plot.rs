//! Pictures of a trace, drawn with plotters into one SVG: hits per
//! tracepoint, emulated cost per tracepoint (one bar per tracepoint in
//! each), and a timeline of the records over emulated time (one row per
//! tracepoint).
//!
//! The hit bars are filled with [`HIT_COLOR`] and the cost bars with
//! [`COST_COLOR`], which nothing else in the picture uses, so a reader of
//! the SVG can count them.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::trace::Entry;

/// Fill of the hit bars (`#1f77b4`).
pub const HIT_COLOR: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
/// Fill of the cost bars (`#ff7f0e`).
pub const COST_COLOR: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
/// Colour of the timeline's points (`#2ca02c`).
pub const POINT_COLOR: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);

/// One tracepoint's numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracepointStat {
    /// Its label, such as `00C2/0001`.
    pub name: String,
    /// Hits.
    pub hits: u64,
    /// Cost (in `Plot::cost_unit`).
    pub cost: u64,
}

/// What to draw.
#[derive(Debug, Clone, Default)]
pub struct Plot {
    /// One entry per tracepoint.
    pub stats: Vec<TracepointStat>,
    /// The unit of the costs: `cycles` or `ns`.
    pub cost_unit: String,
    /// Records: (emulated time in ms, index into `stats`).
    pub timeline: Vec<(f64, usize)>,
    /// The unit of the timeline: `ms` (emulated) or `s` (OS/2 time).
    pub time_unit: String,
}

impl Plot {
    /// The plot of trace entries: records per tracepoint (major/minor),
    /// the sum of their sidecar costs (ns), and the timeline (the sidecar's
    /// ms, else OS/2 seconds).
    pub fn from_entries(entries: &[&Entry]) -> Plot {
        let mut by_tp: BTreeMap<(u8, u16), (u64, u64)> = BTreeMap::new();
        for e in entries {
            let s = by_tp.entry((e.record.major, e.record.minor)).or_default();
            s.0 += 1;
            s.1 = s.1.saturating_add(e.fine.map_or(0, |f| f.cost_ns));
        }
        let index: BTreeMap<(u8, u16), usize> =
            by_tp.keys().enumerate().map(|(i, k)| (*k, i)).collect();
        let fine = entries.iter().all(|e| e.fine.is_some());
        let timeline = entries
            .iter()
            .map(|e| {
                let t = match e.fine {
                    Some(f) if fine => f.ns as f64 / 1e6,
                    _ => e.hundredths().unwrap_or(0) as f64 / 100.0,
                };
                (t, index[&(e.record.major, e.record.minor)])
            })
            .collect();
        Plot {
            stats: by_tp
                .iter()
                .map(|((major, minor), (hits, cost))| TracepointStat {
                    name: format!("{major:04X}/{minor:04X}"),
                    hits: *hits,
                    cost: *cost,
                })
                .collect(),
            cost_unit: "ns".to_string(),
            timeline,
            time_unit: if fine { "ms" } else { "s" }.to_string(),
        }
    }

    /// The SVG text.
    ///
    /// # Errors
    /// The drawing backend's error, as text.
    pub fn to_svg(&self) -> Result<String, String> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (900, 900)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| e.to_string())?;
            let areas = root.split_evenly((3, 1));
            let hits: Vec<u64> = self.stats.iter().map(|s| s.hits).collect();
            let costs: Vec<u64> = self.stats.iter().map(|s| s.cost).collect();
            self.bars(&areas[0], "hits per tracepoint", &hits, HIT_COLOR)?;
            let title = format!("cost per tracepoint ({})", self.cost_unit);
            self.bars(&areas[1], &title, &costs, COST_COLOR)?;
            self.timeline(&areas[2])?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(svg)
    }

    fn label(&self, x: f64) -> String {
        let i = x.floor();
        if i < 0.0 || (x - i - 0.5).abs() > 0.01 {
            return String::new();
        }
        self.stats
            .get(i as usize)
            .map_or_else(String::new, |s| s.name.clone())
    }

    fn bars(
        &self,
        area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        title: &str,
        values: &[u64],
        color: RGBColor,
    ) -> Result<(), String> {
        let n = values.len().max(1) as f64;
        let top = values.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.1;
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n, 0f64..top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(values.len() * 2 + 1)
            .x_label_formatter(&|x| self.label(*x))
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(values.iter().enumerate().map(|(i, &v)| {
                let x = i as f64;
                Rectangle::new([(x + 0.15, 0.0), (x + 0.85, v as f64)], color.filled())
            }))
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    fn timeline(
        &self,
        area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    ) -> Result<(), String> {
        let (lo, hi) = self
            .timeline
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), (t, _)| {
                (lo.min(*t), hi.max(*t))
            });
        let (lo, hi) = if lo > hi {
            (0.0, 1.0)
        } else {
            (lo, hi.max(lo + 1e-3))
        };
        let pad = (hi - lo) * 0.05;
        let rows = self.stats.len().max(1) as f64;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("records over emulated time ({})", self.time_unit),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d((lo - pad)..(hi + pad), 0f64..rows)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .y_labels(self.stats.len() * 2 + 1)
            .y_label_formatter(&|y| self.label(*y))
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(
                self.timeline
                    .iter()
                    .map(|(t, i)| Circle::new((*t, *i as f64 + 0.5), 3, POINT_COLOR.filled())),
            )
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}
