//! CMDSHELL, the kernel's own DLL behind the built-in CMD.EXE: its one
//! entry runs the command interpreter (`cmd.rs`).

use crate::api::ApiDef;

/// The entries.
pub static DEFS: &[ApiDef] = &[api!("CMDSHELL" 1 "CmdStep" Sys32 [] raw crate::cmd::step)];
