//! stda crate: see the module docs.
