//! loader crate: see the module docs.
