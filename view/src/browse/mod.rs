//! The terminal browser, `os2trace browse`: a record list, a detail pane,
//! paging, go-to, search, filters and a histogram view, on ratatui.
//!
//! [`App`] is the whole state and takes keys ([`App::key`]); [`ui`] draws
//! it; [`run`] is the terminal loop. The state knows nothing of the
//! terminal, so it is tested directly, and the loop through tmux.
//!
//! Keys (also shown by `?`):
//!
//! | key | does |
//! |---|---|
//! | `↓` `j` / `↑` `k` | next / previous record |
//! | `PgDn` `space` / `PgUp` `b` | page forward / backward |
//! | `Home` `g` / `End` `G` | first / last record |
//! | `:` | go to a record number, an OS/2 time (`12:00:01.50`) or an emulated time (`1.5ms`) |
//! | `/` then `n` / `N` | search the formatted text, next / previous match |
//! | `m` `i` `p` `t` | filter by major, minor, PID (hex, comma-separated) or text |
//! | `c` | clear the filters |
//! | `h` | histogram of hits and cost per tracepoint (again: back) |
//! | `q` `Esc` | quit |

mod ui;

use std::collections::BTreeMap;

use crate::filter::{Bound, Filter};
use crate::render::Formatter;
use crate::trace::Trace;

pub use ui::draw;

/// What a prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// `:` a record or time.
    Goto,
    /// `/` text to find.
    Search,
    /// `m` majors.
    Major,
    /// `i` minors.
    Minor,
    /// `p` PIDs.
    Pid,
    /// `t` text filter.
    Text,
}

impl Ask {
    fn label(self) -> &'static str {
        match self {
            Ask::Goto => "go to (record, 12:00:01.50 or 1.5ms)",
            Ask::Search => "search",
            Ask::Major => "filter major (hex, a,b)",
            Ask::Minor => "filter minor (hex, a,b)",
            Ask::Pid => "filter pid (hex, a,b)",
            Ask::Text => "filter text",
        }
    }
}

/// A key, as the browser sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character.
    Char(char),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Home.
    Home,
    /// End.
    End,
}

/// One row of the histogram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistRow {
    /// `00C2/0001`.
    pub tracepoint: String,
    /// DESC of its first record.
    pub desc: String,
    /// Records (hits that logged).
    pub hits: u64,
    /// Sum of the sidecar costs, ns (0 without a sidecar).
    pub cost_ns: u64,
}

/// The browser's state.
pub struct App {
    trace: Trace,
    fmt: Formatter,
    filter: Filter,
    /// Indexes into `trace.entries` that pass the filter.
    visible: Vec<usize>,
    /// Position in `visible`.
    selected: usize,
    /// First row shown.
    top: usize,
    /// Rows of the list at the last draw (for paging).
    page: usize,
    prompt: Option<(Ask, String)>,
    search: Option<String>,
    message: String,
    histogram: bool,
    help: bool,
    quit: bool,
}

impl App {
    /// A browser over `trace`, formatted with `fmt`, filtered by `filter`.
    pub fn new(trace: Trace, fmt: Formatter, filter: Filter) -> App {
        let mut app = App {
            trace,
            fmt,
            filter,
            visible: Vec::new(),
            selected: 0,
            top: 0,
            page: 10,
            prompt: None,
            search: None,
            message: String::new(),
            histogram: false,
            help: false,
            quit: false,
        };
        app.refilter();
        app
    }

    /// Whether `q` was pressed.
    pub fn done(&self) -> bool {
        self.quit
    }

    /// The trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The formatter.
    pub fn formatter(&self) -> &Formatter {
        &self.fmt
    }

    /// The records shown, as indexes into the trace's entries.
    pub fn visible(&self) -> &[usize] {
        &self.visible
    }

    /// The selected record's index into the trace's entries.
    pub fn selected(&self) -> Option<usize> {
        self.visible.get(self.selected).copied()
    }

    /// The status line.
    pub fn status(&self) -> String {
        if let Some((ask, text)) = &self.prompt {
            return format!("{}: {text}_", ask.label());
        }
        let pos = if self.visible.is_empty() {
            "no records".to_string()
        } else {
            format!("record {}/{}", self.selected + 1, self.visible.len())
        };
        let mut s = format!(
            "{pos} of {} | filter: {}",
            self.trace.entries.len(),
            self.filter.describe()
        );
        if let Some(q) = &self.search {
            s.push_str(&format!(" | search \"{q}\""));
        }
        if !self.message.is_empty() {
            s.push_str(" | ");
            s.push_str(&self.message);
        }
        s.push_str(" | ? keys");
        s
    }

    /// The histogram rows, by tracepoint, over the visible records.
    pub fn histogram(&self) -> Vec<HistRow> {
        let mut rows: BTreeMap<(u8, u16), HistRow> = BTreeMap::new();
        for &i in &self.visible {
            let e = &self.trace.entries[i];
            let r = &e.record;
            let row = rows.entry((r.major, r.minor)).or_insert_with(|| HistRow {
                tracepoint: format!("{:04X}/{:04X}", r.major, r.minor),
                desc: self.fmt.desc(e),
                hits: 0,
                cost_ns: 0,
            });
            row.hits += 1;
            row.cost_ns = row.cost_ns.saturating_add(e.fine.map_or(0, |f| f.cost_ns));
        }
        rows.into_values().collect()
    }

    fn refilter(&mut self) {
        let keep_entry = self.selected();
        let fmt = &self.fmt;
        let filter = &self.filter;
        self.visible = self
            .trace
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                filter.keeps_fields(e)
                    && (filter.grep.is_none() || filter.keeps(e, &fmt.search_text(e)))
            })
            .map(|(i, _)| i)
            .collect();
        self.selected = keep_entry
            .and_then(|k| self.visible.iter().position(|&i| i >= k))
            .unwrap_or(0);
        self.top = self.top.min(self.selected);
    }

    fn set_page(&mut self, rows: usize) {
        self.page = rows.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + self.page {
            self.top = self.selected + 1 - self.page;
        }
    }

    fn move_to(&mut self, pos: usize) {
        self.selected = pos.min(self.visible.len().saturating_sub(1));
        let page = self.page;
        self.set_page(page);
    }

    /// Takes one key.
    pub fn key(&mut self, key: Key) {
        if let Some((ask, mut text)) = self.prompt.take() {
            match key {
                Key::Enter => self.answer(ask, &text),
                Key::Esc => {}
                Key::Backspace => {
                    text.pop();
                    self.prompt = Some((ask, text));
                }
                Key::Char(c) => {
                    text.push(c);
                    self.prompt = Some((ask, text));
                }
                _ => self.prompt = Some((ask, text)),
            }
            return;
        }
        self.message.clear();
        if self.help {
            self.help = false;
            return;
        }
        let last = self.visible.len().saturating_sub(1);
        match key {
            Key::Char('q') | Key::Esc => self.quit = true,
            Key::Down | Key::Char('j') => self.move_to(self.selected + 1),
            Key::Up | Key::Char('k') => self.move_to(self.selected.saturating_sub(1)),
            Key::PageDown | Key::Char(' ') => self.move_to(self.selected + self.page),
            Key::PageUp | Key::Char('b') => self.move_to(self.selected.saturating_sub(self.page)),
            Key::Home | Key::Char('g') => self.move_to(0),
            Key::End | Key::Char('G') => self.move_to(last),
            Key::Char(':') => self.prompt = Some((Ask::Goto, String::new())),
            Key::Char('/') => self.prompt = Some((Ask::Search, String::new())),
            Key::Char('m') => self.prompt = Some((Ask::Major, String::new())),
            Key::Char('i') => self.prompt = Some((Ask::Minor, String::new())),
            Key::Char('p') => self.prompt = Some((Ask::Pid, String::new())),
            Key::Char('t') => self.prompt = Some((Ask::Text, String::new())),
            Key::Char('n') => self.find(true),
            Key::Char('N') => self.find(false),
            Key::Char('c') => {
                self.filter = Filter::default();
                self.refilter();
            }
            Key::Char('h') => self.histogram = !self.histogram,
            Key::Char('?') => self.help = true,
            _ => {}
        }
    }

    fn answer(&mut self, ask: Ask, text: &str) {
        let text = text.trim();
        let codes = |t: &str| -> Result<Vec<u16>, String> {
            if t.is_empty() {
                return Ok(Vec::new());
            }
            t.split(',')
                .map(|c| {
                    let c = c.trim();
                    let c = c.strip_prefix("0x").unwrap_or(c);
                    u16::from_str_radix(c, 16).map_err(|_| format!("'{c}' is not a hex number"))
                })
                .collect()
        };
        let result = match ask {
            Ask::Goto => self.goto(text),
            Ask::Search => {
                self.search = (!text.is_empty()).then(|| text.to_string());
                self.find(true);
                Ok(())
            }
            Ask::Major => codes(text).map(|v| self.filter.majors = v),
            Ask::Minor => codes(text).map(|v| self.filter.minors = v),
            Ask::Pid => codes(text).map(|v| self.filter.pids = v),
            Ask::Text => {
                self.filter.grep = (!text.is_empty()).then(|| text.to_string());
                Ok(())
            }
        };
        match result {
            Err(e) => self.message = e,
            Ok(()) => {
                if matches!(ask, Ask::Major | Ask::Minor | Ask::Pid | Ask::Text) {
                    self.refilter();
                }
            }
        }
    }

    fn goto(&mut self, text: &str) -> Result<(), String> {
        let bound: Bound = text.parse()?;
        let pos = self.visible.iter().position(|&i| {
            let e = &self.trace.entries[i];
            match bound {
                Bound::Seq(n) => e.seq >= n,
                Bound::Hundredths(h) => e.hundredths().is_some_and(|t| t >= h),
                Bound::Ns(ns) => e.fine.is_some_and(|f| f.ns >= ns),
            }
        });
        match pos {
            Some(p) => {
                self.move_to(p);
                Ok(())
            }
            None => Err(format!("no record at or after {text}")),
        }
    }

    fn find(&mut self, forward: bool) {
        let Some(q) = self.search.clone().map(|q| q.to_lowercase()) else {
            self.message = "no search: press /".to_string();
            return;
        };
        let n = self.visible.len();
        for step in 1..=n {
            let pos = if forward {
                (self.selected + step) % n
            } else {
                (self.selected + n - step % n) % n
            };
            let e = &self.trace.entries[self.visible[pos]];
            if self.fmt.search_text(e).to_lowercase().contains(&q) {
                if (forward && pos <= self.selected) || (!forward && pos >= self.selected) {
                    self.message = "search wrapped".to_string();
                }
                self.move_to(pos);
                return;
            }
        }
        self.message = format!("\"{q}\" not found");
    }
}

/// Runs the browser in the terminal until `q`.
///
/// # Errors
/// The terminal's.
pub fn run(app: &mut App) -> std::io::Result<()> {
    use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
    let mut terminal = ratatui::try_init()?;
    let result = (|| {
        while !app.done() {
            terminal.draw(|f| draw(f, app))?;
            if let Event::Key(k) = event::read()? {
                if k.kind != KeyEventKind::Press {
                    continue;
                }
                let key = match k.code {
                    KeyCode::Char(c) => Key::Char(c),
                    KeyCode::Enter => Key::Enter,
                    KeyCode::Esc => Key::Esc,
                    KeyCode::Backspace => Key::Backspace,
                    KeyCode::Up => Key::Up,
                    KeyCode::Down => Key::Down,
                    KeyCode::PageUp => Key::PageUp,
                    KeyCode::PageDown => Key::PageDown,
                    KeyCode::Home => Key::Home,
                    KeyCode::End => Key::End,
                    _ => continue,
                };
                app.key(key);
            }
        }
        Ok(())
    })();
    ratatui::restore();
    result
}
