//! Drawing the browser: the record list, the detail pane (or the
//! histogram, or the key help) and the status line.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

use super::App;
use crate::render::{marked_hex, stamp_text};

const HELP: &[&str] = &[
    "j/Down k/Up    next / previous record",
    "Space/PgDn b/PgUp  page forward / backward",
    "g/Home G/End   first / last record",
    ":              go to record, 12:00:01.50 or 1.5ms",
    "/  n  N        search, next match, previous match",
    "m i p t        filter major, minor, pid (hex a,b) or text",
    "c              clear the filters",
    "h              histogram of hits and cost per tracepoint",
    "q Esc          quit",
    "",
    "(any key closes this help)",
];

/// Draws the whole screen.
pub fn draw(f: &mut Frame<'_>, app: &mut App) {
    let [list, detail, status] = Layout::vertical([
        Constraint::Min(5),
        Constraint::Percentage(45),
        Constraint::Length(1),
    ])
    .areas(f.area());
    draw_list(f, app, list);
    if app.help {
        let lines: Vec<Line<'_>> = HELP.iter().map(|l| Line::from(*l)).collect();
        f.render_widget(
            Paragraph::new(lines).block(Block::bordered().title(" keys ")),
            detail,
        );
    } else if app.histogram {
        draw_histogram(f, app, detail);
    } else {
        draw_detail(f, app, detail);
    }
    f.render_widget(
        Paragraph::new(app.status()).style(Style::new().add_modifier(Modifier::REVERSED)),
        status,
    );
}

fn draw_list(f: &mut Frame<'_>, app: &mut App, area: Rect) {
    let rows = usize::from(area.height.saturating_sub(3));
    app.set_page(rows);
    let mut lines = vec![
        Line::from(format!(
            "{:>6}  {:<24} {:<9} {:<4}  DESC",
            "SEQ", "TIME", "MAJ/MIN", "PID"
        ))
        .style(Style::new().add_modifier(Modifier::BOLD)),
    ];
    for pos in app.top..(app.top + rows).min(app.visible.len()) {
        let e = &app.trace.entries[app.visible[pos]];
        let r = &e.record;
        let text = format!(
            "{:>6}  {:<24} {:02X}/{:04X}   {:04X}  {}",
            e.seq,
            e.time_text(),
            r.major,
            r.minor,
            r.pid,
            app.fmt.desc(e)
        );
        let mut line = Line::from(text);
        if pos == app.selected {
            line = line.style(Style::new().add_modifier(Modifier::REVERSED));
        }
        lines.push(line);
    }
    let title = format!(
        " os2trace browse: {} ",
        app.trace
            .sources
            .iter()
            .map(|s| crate::render::file_name(&s.path))
            .collect::<Vec<_>>()
            .join(" ")
    );
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        area,
    );
}

fn draw_detail(f: &mut Frame<'_>, app: &App, area: Rect) {
    let mut lines: Vec<Line<'_>> = Vec::new();
    if let Some(i) = app.selected() {
        let e = &app.trace.entries[i];
        for l in app.fmt.lines(e) {
            lines.push(Line::from(l));
        }
        let r = &e.record;
        lines.push(Line::from(format!(
            "OS/2 time {}  flags {:02X}  {} data bytes{}",
            stamp_text(r.time),
            r.flags.bits(),
            r.data.len(),
            e.fine.map_or(String::new(), |f| format!(
                "  cycle {}  cost {} ns ({} cycles)  at {:08X}",
                f.cycle, f.cost_ns, f.cost_cycles, f.address
            ))
        )));
        let dynamic = r.flags.contains(stda::RecordFlags::DYNAMIC);
        for l in marked_hex(&r.data, dynamic) {
            lines.push(Line::from(format!("   {l}")));
        }
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(" record ")),
        area,
    );
}

fn draw_histogram(f: &mut Frame<'_>, app: &App, area: Rect) {
    let rows = app.histogram();
    let max_hits = rows.iter().map(|r| r.hits).max().unwrap_or(1).max(1);
    let max_cost = rows.iter().map(|r| r.cost_ns).max().unwrap_or(1).max(1);
    let width = 20u64;
    let mut lines = vec![Line::from(format!(
        "{:<10} {:<22} {:<22} DESC",
        "TRACEPOINT", "HITS", "COST (ns)"
    ))];
    for r in &rows {
        let hb = "#".repeat((r.hits * width).div_ceil(max_hits) as usize);
        // Costs come from the sidecar and may be near u64::MAX.
        let cb = "=".repeat(
            (u128::from(r.cost_ns) * u128::from(width)).div_ceil(u128::from(max_cost)) as usize,
        );
        lines.push(Line::from(format!(
            "{:<10} {:<20} {:>5} {:<20} {:>8}  {}",
            r.tracepoint, hb, r.hits, cb, r.cost_ns, r.desc
        )));
    }
    f.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(" histogram: hits and cost per tracepoint ")),
        area,
    );
}
