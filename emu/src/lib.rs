//! emu crate: see the module docs.
