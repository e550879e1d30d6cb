//! The kernel's side of the trace table: the producers' entry points on
//! [`Process`], and CPTRAP's start and end.

use cptrap::{Entry, Interface, InterfaceRecord, TraceTable, TypeNum};

use super::{CptrapConfig, CptrapResult};
use crate::process::Process;

impl Process {
    /// The always-on trace table of this process's kernel.
    pub fn trace_table(&self) -> &TraceTable {
        self.kernel.systable.table()
    }

    /// Starts CPTRAP: the recorder, and the zaps placed in the loaded
    /// modules.
    ///
    /// # Errors
    /// A zap names a module or object that is not loaded, or a place that
    /// cannot take a tracepoint.
    pub fn cptrap_start(&mut self, cfg: &CptrapConfig) -> Result<(), String> {
        let mut placed = Vec::new();
        for zap in &cfg.zaps {
            let module = self
                .module(&zap.module)
                .ok_or_else(|| format!("--cptrap-zap: module {} is not loaded", zap.module))?;
            let object = zap
                .object
                .checked_sub(1)
                .and_then(|i| module.objects.get(i as usize))
                .ok_or_else(|| {
                    format!("--cptrap-zap: {} has no object {}", zap.module, zap.object)
                })?;
            let linear = object.base.wrapping_add(zap.offset);
            placed.push((linear, zap.clone()));
        }
        for (linear, zap) in placed {
            self.machine.insert_tracepoint(linear).map_err(|f| {
                format!(
                    "--cptrap-zap {}:{}:{:#x}: the page is not present ({f:?})",
                    zap.module, zap.object, zap.offset
                )
            })?;
            self.kernel.systable.add_zap(linear, zap);
        }
        let now = self.kernel.clock.cycles(self.machine.cycles());
        self.kernel.systable.start(cfg, now);
        Ok(())
    }

    /// Ends CPTRAP and returns its file (`None` when it did not run).
    pub fn cptrap_finish(&mut self) -> Option<CptrapResult> {
        self.kernel.systable.finish()
    }

    /// Records a kernel event: the frame (PID, TID, time, bitness) is
    /// filled in here.
    pub(crate) fn systable_event(&mut self, mut entry: Entry) {
        let cpu = self.machine.cpu();
        entry.frame.pid = self.pcb.pid;
        entry.frame.tid = 1;
        if cpu.sreg(emu::SegReg::Cs).big() {
            entry.frame.flags |= cptrap::entry::FLAG_32BIT;
        }
        let now = self.kernel.clock.cycles(self.machine.cycles());
        let hz = self.kernel.clock.hz;
        entry.frame.time = now;
        self.kernel.systable.record(&entry, now, hz);
    }

    /// Records interface data (X'3E' or X'3F').
    pub(crate) fn systable_interface(&mut self, record: InterfaceRecord) {
        let now = self.kernel.clock.cycles(self.machine.cycles());
        let hz = self.kernel.clock.hz;
        self.kernel
            .systable
            .record_interface(record, self.pcb.pid, now, hz);
    }

    /// A breakpoint at `linear`: if a zap is there, takes its CP interface
    /// record and returns true (the caller still runs the original
    /// instruction).
    pub(crate) fn systable_zap(&mut self, linear: u32) -> bool {
        let Some(zap) = self.kernel.systable.zap_at(linear).cloned() else {
            return false;
        };
        if !self
            .kernel
            .systable
            .wants_interface(TypeNum::CP_INTERFACE, zap.code, self.pcb.pid)
        {
            return true;
        }
        let cpu = self.machine.cpu();
        let base = cpu.gpr[zap.reg].wrapping_add(zap.disp as u32);
        let ds = cpu.sreg(emu::SegReg::Ds);
        let address = if cpu.sreg(emu::SegReg::Cs).big() {
            ds.base.wrapping_add(base)
        } else {
            ds.base.wrapping_add(base & 0xFFFF)
        };
        let len = usize::from(zap.len).min(cptrap::iface::MAX_DATA);
        let data = self.read_mem(address, len as u32).unwrap_or_default();
        self.systable_interface(InterfaceRecord::new(Interface::Cp, zap.code, &data));
        true
    }
}
