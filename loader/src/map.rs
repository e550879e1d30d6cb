//! Linker MAP files: placeholder replaced below.
