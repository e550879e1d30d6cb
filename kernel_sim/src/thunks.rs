//! Thunk slots: the addresses in the system region that imports of system
//! DLLs resolve to, and the kernel's own return points.
//!
//! Slot `i` is the linear address `THUNK_BASE + 4 * i`, reachable as
//! `THUNK_CS:4*i` from 16-bit code and flat from 32-bit code. Each slot
//! is registered as a host-call address with the machine.

use std::collections::HashMap;

use crate::api::ApiDef;

/// A system DLL entry bound to a slot.
#[derive(Clone, Debug)]
pub struct Bound {
    /// DLL name as imported, upper case.
    pub module: String,
    /// Ordinal (0 when imported by an unknown name).
    pub ordinal: u32,
    /// The table entry, if the ordinal is known.
    pub def: Option<&'static ApiDef>,
}

/// What a slot is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// An API: index into the bound list.
    Api(usize),
    /// The return address of a 32-bit program's entry point: returning
    /// there ends the process with EAX.
    EntryReturn,
    /// The return address of a DLL initialization routine.
    InitReturn,
    /// The return address of a thread's function: returning there ends
    /// the thread with EAX (DosExit(EXIT_THREAD, EAX)).
    ThreadReturn,
    /// The return address of an exit-list routine: returning there is
    /// DosExitList(EXLST_EXIT) (`exitlist.rs`).
    ExitListReturn,
    /// The return address of a DLL termination routine run as the
    /// process ends: the next one runs (`exitlist.rs`).
    TermReturn,
}

/// The slot table.
#[derive(Debug, Default)]
pub struct Thunks {
    slots: Vec<Slot>,
    apis: Vec<Bound>,
    by_key: HashMap<(String, u32, String), u32>,
}

impl Thunks {
    /// The slot with number `n`.
    pub fn slot(&self, n: u32) -> Option<Slot> {
        self.slots.get(n as usize).copied()
    }

    /// The bound API of an [`Slot::Api`] index.
    pub fn api(&self, i: usize) -> &Bound {
        &self.apis[i]
    }

    /// The slot number of a special slot, allocating it once.
    pub fn special(&mut self, s: Slot) -> u32 {
        if let Some(i) = self.slots.iter().position(|x| *x == s) {
            return i as u32;
        }
        self.slots.push(s);
        self.slots.len() as u32 - 1
    }

    /// The slot number for an import, allocating it once; the second value
    /// is true when the slot is new (the caller registers its host call).
    pub fn bind(
        &mut self,
        module: &str,
        ordinal: u32,
        name: &str,
        def: Option<&'static ApiDef>,
    ) -> (u32, bool) {
        let key = (
            module.to_ascii_uppercase(),
            ordinal,
            name.to_ascii_uppercase(),
        );
        if let Some(&n) = self.by_key.get(&key) {
            return (n, false);
        }
        self.apis.push(Bound {
            module: key.0.clone(),
            ordinal,
            def,
        });
        self.slots.push(Slot::Api(self.apis.len() - 1));
        let n = self.slots.len() as u32 - 1;
        self.by_key.insert(key, n);
        (n, true)
    }

    /// Number of slots in use.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// No slots yet.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}
