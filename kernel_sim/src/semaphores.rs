//! The kernel's semaphore table: 32-bit event, mutex and muxwait
//! semaphores by handle (`0x1000 + index`), shared by every process and
//! thread of the system. The APIs that use it are in `api/sems.rs`.
//!
//! Decisions: a semaphore is a kind and a count (posts of an event,
//! requests of a mutex's owner); a closed handle's slot stays empty, so
//! handles are never reused within a run. Blocking is decided by the API
//! layer, which knows how many threads there are.
//!
//! Names and sharing: a named semaphore (`\SEM32\...`, compared without
//! case) is shared; so is one created with DC_SEM_SHARED. A shared
//! semaphore's handle is the same in every process (as in OS/2, where
//! shared handles are system-wide), so DosOpen*Sem by handle works from
//! any process, by name from any process. Opens are counted per process
//! ([`Opens`]): the create is the creator's first, each DosOpen*Sem adds
//! one for the caller, each DosClose*Sem takes one of the caller's away
//! (a process that has none gets ERROR_INVALID_HANDLE), and the
//! semaphore goes when no process has it open. A process that ends
//! closes all its opens ([`Semaphores::process_ended`]), so its private
//! semaphores go, and so do shared ones nobody else opened.
//!
//! Muxwait semaphores hold up to 64 records (handle, user value) of
//! event semaphores or of mutex semaphores, never both, never another
//! muxwait; a shared muxwait holds only shared semaphores.

use crate::rc::*;

/// The first handle.
const FIRST_HANDLE: u32 = 0x1000;

/// Records a muxwait semaphore holds at most (DCMW_MAX_SEMRECORDS).
pub(crate) const MAX_MUX_RECORDS: usize = 64;

/// Opens a semaphore can have at most (ERROR_TOO_MANY_OPENS beyond).
const MAX_OPENS: u32 = 0xFFFF;

/// Which kind of semaphore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SemKind {
    /// An event semaphore: `count` is the post count.
    Event,
    /// A mutex semaphore: `count` is the owner's request count.
    Mutex,
    /// A muxwait semaphore: `mux` holds its records.
    Mux,
}

/// A muxwait semaphore's list.
#[derive(Clone, Debug, Default)]
pub(crate) struct MuxList {
    /// (semaphore handle, user value), in the order given.
    pub(crate) records: Vec<(u32, u32)>,
    /// DCMW_WAIT_ALL (else DCMW_WAIT_ANY).
    pub(crate) all: bool,
}

/// One semaphore.
#[derive(Clone, Debug)]
pub(crate) struct Sem {
    kind: SemKind,
    /// Posts (event) or requests (mutex).
    pub(crate) count: u32,
    /// The owning thread of a mutex (0: none).
    pub(crate) owner: u32,
    /// A mutex whose owner ended while holding it: the next request is
    /// told ERROR_SEM_OWNER_DIED.
    pub(crate) owner_died_rc: u32,
    /// Its name, upper case (`\SEM32\...`), if it has one.
    pub(crate) name: Option<String>,
    /// Shared (named, or DC_SEM_SHARED).
    pub(crate) shared: bool,
    /// Opens not yet closed, by process.
    opens: Opens,
    /// A muxwait semaphore's list.
    pub(crate) mux: MuxList,
}

/// Opens of a system-wide object by process: (PID, count), in PID order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Opens(Vec<(u16, u32)>);

impl Opens {
    /// One open, by `pid`.
    pub(crate) fn one(pid: u16) -> Opens {
        Opens(vec![(pid, 1)])
    }

    /// Opens of every process.
    pub(crate) fn total(&self) -> u32 {
        self.0.iter().fold(0u32, |a, o| a.saturating_add(o.1))
    }

    /// One more open by `pid`.
    pub(crate) fn add(&mut self, pid: u16) {
        match self.0.binary_search_by_key(&pid, |o| o.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.saturating_add(1),
            Err(i) => self.0.insert(i, (pid, 1)),
        }
    }

    /// One open of `pid` fewer: false if it has none.
    pub(crate) fn remove(&mut self, pid: u16) -> bool {
        let Ok(i) = self.0.binary_search_by_key(&pid, |o| o.0) else {
            return false;
        };
        self.0[i].1 -= 1;
        if self.0[i].1 == 0 {
            self.0.remove(i);
        }
        true
    }

    /// Every open of `pid` goes (it ended).
    pub(crate) fn drop_process(&mut self, pid: u16) {
        self.0.retain(|o| o.0 != pid);
    }

    /// Has `pid` this open?
    pub(crate) fn has(&self, pid: u16) -> bool {
        self.0.iter().any(|o| o.0 == pid)
    }
}

/// The table.
#[derive(Debug, Default)]
pub(crate) struct Semaphores {
    slots: Vec<Option<Sem>>,
}

/// A semaphore name as DosCreate*Sem takes it: `\SEM32\` and at least one
/// more character, a valid path (no `:*?"<>|`, no empty component), at
/// most 255 bytes. Returns it upper case.
pub(crate) fn check_name(name: &[u8]) -> Result<String, u32> {
    let s: String = name.iter().map(|&b| char::from(b)).collect();
    let up = s.to_ascii_uppercase().replace('/', "\\");
    let rest = up.strip_prefix("\\SEM32\\").ok_or(ERROR_INVALID_NAME)?;
    let bad = |c: char| matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') || c < ' ';
    if rest.is_empty()
        || up.len() > 255
        || rest.chars().any(bad)
        || rest.split('\\').any(str::is_empty)
    {
        return Err(ERROR_INVALID_NAME);
    }
    Ok(up)
}

impl Semaphores {
    /// A new semaphore with `count`, opened by `pid`; its handle. `name`
    /// is checked ([`check_name`]) and must be new.
    pub(crate) fn create(
        &mut self,
        pid: u16,
        kind: SemKind,
        count: u32,
        owner: u32,
        name: Option<String>,
        shared: bool,
    ) -> Result<u32, u32> {
        if let Some(n) = &name
            && self.by_name(n).is_some()
        {
            return Err(ERROR_DUPLICATE_NAME);
        }
        if self.slots.len() >= 0xFFFF {
            return Err(ERROR_TOO_MANY_HANDLES);
        }
        let shared = shared || name.is_some();
        self.slots.push(Some(Sem {
            kind,
            count,
            owner,
            owner_died_rc: 0,
            name,
            shared,
            opens: Opens::one(pid),
            mux: MuxList::default(),
        }));
        Ok(FIRST_HANDLE + self.slots.len() as u32 - 1)
    }

    /// The handle of the semaphore named `name` (upper case).
    fn by_name(&self, name: &str) -> Option<u32> {
        self.slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.name.as_deref() == Some(name)))
            .map(|i| FIRST_HANDLE + i as u32)
    }

    /// DosOpen*Sem: by name (ERROR_SEM_NOT_FOUND, or ERROR_INVALID_HANDLE
    /// for another kind) or, without one, by the handle of a shared
    /// semaphore. Counts the open for `pid`; returns the handle.
    pub(crate) fn open(
        &mut self,
        pid: u16,
        kind: SemKind,
        name: Option<&str>,
        h: u32,
    ) -> Result<u32, u32> {
        let h = match name {
            Some(n) => self.by_name(n).ok_or(ERROR_SEM_NOT_FOUND)?,
            None => h,
        };
        let s = self.get_mut(h, kind)?;
        if !s.shared {
            return Err(ERROR_INVALID_HANDLE);
        }
        if s.opens.total() >= MAX_OPENS {
            return Err(ERROR_TOO_MANY_OPENS);
        }
        s.opens.add(pid);
        Ok(h)
    }

    /// Close `pid`'s handle (of any kind): one open fewer; the semaphore
    /// goes with the last. The last close of a semaphore that a muxwait
    /// semaphore lists is ERROR_SEM_BUSY.
    pub(crate) fn close(&mut self, pid: u16, h: u32) -> Result<(), u32> {
        let listed = self
            .slots
            .iter()
            .flatten()
            .any(|m| m.mux.records.iter().any(|r| r.0 == h));
        let slot = h
            .checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get_mut(i as usize))
            .ok_or(ERROR_INVALID_HANDLE)?;
        let s = slot.as_mut().ok_or(ERROR_INVALID_HANDLE)?;
        if !s.opens.has(pid) {
            return Err(ERROR_INVALID_HANDLE);
        }
        if s.opens.total() > 1 {
            s.opens.remove(pid);
            return Ok(());
        }
        if listed {
            return Err(ERROR_SEM_BUSY);
        }
        *slot = None;
        Ok(())
    }

    /// Process `pid` ended: its opens are closed, and every semaphore no
    /// process has open any more goes (listed in a muxwait or not: the
    /// muxwait's record then fails with ERROR_INVALID_HANDLE).
    pub(crate) fn process_ended(&mut self, pid: u16) {
        for slot in &mut self.slots {
            if let Some(s) = slot {
                s.opens.drop_process(pid);
                if s.opens.total() == 0 {
                    *slot = None;
                }
            }
        }
    }

    /// The open semaphore `h` if it is of `kind`.
    pub(crate) fn get_mut(&mut self, h: u32, kind: SemKind) -> Result<&mut Sem, u32> {
        h.checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get_mut(i as usize))
            .and_then(Option::as_mut)
            .filter(|s| s.kind == kind)
            .ok_or(ERROR_INVALID_HANDLE)
    }

    /// The kind of the open semaphore `h`.
    fn kind(&self, h: u32) -> Option<SemKind> {
        h.checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get(i as usize))
            .and_then(Option::as_ref)
            .map(|s| s.kind)
    }

    /// Can `records` join muxwait `list` (a shared one if `shared`)?
    pub(crate) fn check_records(
        &self,
        list: &[(u32, u32)],
        records: &[(u32, u32)],
        shared: bool,
    ) -> Result<(), u32> {
        if list.len() + records.len() > MAX_MUX_RECORDS {
            return Err(ERROR_TOO_MANY_SEMAPHORES);
        }
        let mut want = list.first().and_then(|r| self.kind(r.0));
        for (i, &(h, _)) in records.iter().enumerate() {
            let kind = self.kind(h).ok_or(ERROR_INVALID_HANDLE)?;
            if kind == SemKind::Mux || want.is_some_and(|k| k != kind) {
                return Err(ERROR_WRONG_TYPE);
            }
            want = Some(kind);
            let sem_shared = self.slots[(h - FIRST_HANDLE) as usize]
                .as_ref()
                .is_some_and(|s| s.shared);
            if shared && !sem_shared {
                return Err(ERROR_WRONG_TYPE);
            }
            if list.iter().chain(&records[..i]).any(|r| r.0 == h) {
                return Err(ERROR_DUPLICATE_HANDLE);
            }
        }
        Ok(())
    }

    /// Is muxwait `h`'s wait over for thread `tid`? `Some((rc, user))`
    /// when it is, taking the mutexes it waited for; `None` while it
    /// must wait.
    pub(crate) fn mux_ready(&mut self, h: u32, tid: u32) -> Option<(u32, u32)> {
        let list = match self.get_mut(h, SemKind::Mux) {
            Ok(s) => s.mux.clone(),
            Err(e) => return Some((e, 0)),
        };
        if list.records.is_empty() {
            return Some((ERROR_EMPTY_MUXWAIT, 0));
        }
        // Which records are satisfied now.
        let mut ready = Vec::new();
        for &(sh, user) in &list.records {
            let ok = match self.kind(sh) {
                Some(SemKind::Event) => self.get_mut(sh, SemKind::Event).is_ok_and(|s| s.count > 0),
                Some(SemKind::Mutex) => self
                    .get_mut(sh, SemKind::Mutex)
                    .is_ok_and(|s| s.owner == 0 || s.owner == tid),
                _ => return Some((ERROR_INVALID_HANDLE, user)),
            };
            if ok {
                ready.push((sh, user));
                if !list.all {
                    break;
                }
            }
        }
        let done = if list.all {
            ready.len() == list.records.len()
        } else {
            !ready.is_empty()
        };
        if !done {
            return None;
        }
        // Take the mutexes (nothing to do for events: a muxwait does not
        // reset them).
        let mut rc = NO_ERROR;
        for &(sh, _) in &ready {
            if let Ok(s) = self.get_mut(sh, SemKind::Mutex) {
                if s.owner == tid {
                    s.count = s.count.saturating_add(1).min(u32::from(u16::MAX));
                } else {
                    s.owner = tid;
                    s.count = 1;
                    if s.owner_died_rc != 0 {
                        rc = std::mem::take(&mut s.owner_died_rc);
                    }
                }
            }
        }
        Some((rc, ready.last().map_or(0, |r| r.1)))
    }

    /// Thread `tid` ended: the mutexes it owned become free, and their
    /// next owner is told it died.
    pub(crate) fn owner_died(&mut self, tid: u32) {
        for s in self.slots.iter_mut().flatten() {
            if s.kind == SemKind::Mutex && s.owner == tid {
                s.owner = 0;
                s.count = 0;
                s.owner_died_rc = crate::rc::ERROR_SEM_OWNER_DIED;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            check_name(b"\\sem32\\App\\Ready").as_deref(),
            Ok("\\SEM32\\APP\\READY")
        );
        assert_eq!(check_name(b"\\SEM32\\"), Err(ERROR_INVALID_NAME));
        assert_eq!(check_name(b"\\SEM\\X"), Err(ERROR_INVALID_NAME));
        assert_eq!(check_name(b"\\SEM32\\A\\\\B"), Err(ERROR_INVALID_NAME));
        assert_eq!(check_name(b"\\SEM32\\A?"), Err(ERROR_INVALID_NAME));
    }

    #[test]
    fn opens_are_counted_and_names_unique() {
        let mut t = Semaphores::default();
        let name = Some("\\SEM32\\X".to_string());
        let h = t
            .create(1, SemKind::Event, 0, 0, name.clone(), false)
            .unwrap();
        assert_eq!(
            t.create(1, SemKind::Mutex, 0, 0, name, false),
            Err(ERROR_DUPLICATE_NAME)
        );
        assert_eq!(t.open(1, SemKind::Event, Some("\\SEM32\\X"), 0), Ok(h));
        assert_eq!(
            t.open(1, SemKind::Mutex, Some("\\SEM32\\X"), 0),
            Err(ERROR_INVALID_HANDLE)
        );
        assert_eq!(
            t.open(1, SemKind::Event, Some("\\SEM32\\Y"), 0),
            Err(ERROR_SEM_NOT_FOUND)
        );
        t.close(1, h).unwrap();
        assert!(t.get_mut(h, SemKind::Event).is_ok(), "one open left");
        t.close(1, h).unwrap();
        assert_eq!(t.close(1, h), Err(ERROR_INVALID_HANDLE));
        let private = t.create(1, SemKind::Event, 0, 0, None, false).unwrap();
        assert_eq!(
            t.open(1, SemKind::Event, None, private),
            Err(ERROR_INVALID_HANDLE)
        );
    }

    #[test]
    fn muxwait_any_and_all() {
        let mut t = Semaphores::default();
        let a = t.create(1, SemKind::Mutex, 0, 0, None, false).unwrap();
        let b = t.create(1, SemKind::Mutex, 1, 7, None, false).unwrap();
        let e = t.create(1, SemKind::Event, 0, 0, None, false).unwrap();
        let recs = [(a, 10), (b, 20)];
        assert_eq!(t.check_records(&[], &recs, false), Ok(()));
        assert_eq!(
            t.check_records(&recs, &[(e, 1)], false),
            Err(ERROR_WRONG_TYPE)
        );
        assert_eq!(
            t.check_records(&recs, &[(a, 1)], false),
            Err(ERROR_DUPLICATE_HANDLE)
        );
        assert_eq!(
            t.check_records(&[], &recs, true),
            Err(ERROR_WRONG_TYPE),
            "private in shared"
        );
        let m = t.create(1, SemKind::Mux, 0, 0, None, false).unwrap();
        t.get_mut(m, SemKind::Mux).unwrap().mux = MuxList {
            records: recs.to_vec(),
            all: true,
        };
        // b is owned by thread 7: thread 1 waits for all.
        assert_eq!(t.mux_ready(m, 1), None);
        assert_eq!(
            t.get_mut(a, SemKind::Mutex).unwrap().owner,
            0,
            "nothing taken"
        );
        t.owner_died(7);
        assert_eq!(t.mux_ready(m, 1), Some((ERROR_SEM_OWNER_DIED, 20)));
        assert_eq!(t.get_mut(a, SemKind::Mutex).unwrap().owner, 1);
        assert_eq!(t.close(1, a), Err(ERROR_SEM_BUSY), "listed in a muxwait");
    }
}
