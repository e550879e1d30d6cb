//! The kernel's semaphore table: 32-bit event and mutex semaphores by
//! handle (`0x1000 + index`), shared by every process and thread of the
//! system. The APIs that use it are in `api/sems.rs`.
//!
//! Decisions: a semaphore is a kind and a count (posts of an event,
//! requests of a mutex's owner); a closed handle's slot stays empty, so
//! handles are never reused within a run. Blocking is decided by the API
//! layer, which knows how many threads there are.

use crate::rc::ERROR_INVALID_HANDLE;

/// The first handle.
const FIRST_HANDLE: u32 = 0x1000;

/// Which kind of semaphore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SemKind {
    /// An event semaphore: `count` is the post count.
    Event,
    /// A mutex semaphore: `count` is the owner's request count.
    Mutex,
}

/// One semaphore.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sem {
    kind: SemKind,
    /// Posts (event) or requests (mutex).
    pub(crate) count: u32,
    /// The owning thread of a mutex (0: none).
    pub(crate) owner: u32,
    /// A mutex whose owner ended while holding it: the next request is
    /// told ERROR_SEM_OWNER_DIED.
    pub(crate) owner_died_rc: u32,
}

/// The table.
#[derive(Debug, Default)]
pub(crate) struct Semaphores {
    slots: Vec<Option<Sem>>,
}

impl Semaphores {
    /// A new semaphore with `count`; its handle.
    pub(crate) fn create(&mut self, kind: SemKind, count: u32, owner: u32) -> u32 {
        self.slots.push(Some(Sem {
            kind,
            count,
            owner,
            owner_died_rc: 0,
        }));
        FIRST_HANDLE + self.slots.len() as u32 - 1
    }

    /// Close a handle (of either kind).
    pub(crate) fn close(&mut self, h: u32) -> Result<(), u32> {
        let slot = h
            .checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get_mut(i as usize))
            .ok_or(ERROR_INVALID_HANDLE)?;
        slot.take().map(|_| ()).ok_or(ERROR_INVALID_HANDLE)
    }

    /// The open semaphore `h` if it is of `kind`.
    pub(crate) fn get_mut(&mut self, h: u32, kind: SemKind) -> Result<&mut Sem, u32> {
        h.checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get_mut(i as usize))
            .and_then(Option::as_mut)
            .filter(|s| s.kind == kind)
            .ok_or(ERROR_INVALID_HANDLE)
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
