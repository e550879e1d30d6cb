//! The circular stack of a hit: 16 slots and a top-of-stack index, kept
//! in locals while the interpreter runs (see the module doc of `interp`
//! for the push and pop rules).

use crate::verify::STACK_SLOTS;

/// The circular stack, kept in locals while a hit runs.
pub(crate) struct Stack {
    pub(crate) slots: [u32; STACK_SLOTS],
    pub(crate) tos: usize,
}

impl Stack {
    #[inline(always)]
    pub(crate) fn push(&mut self, value: u32) {
        self.tos = (self.tos + 1) & (STACK_SLOTS - 1);
        self.slots[self.tos] = value;
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> u32 {
        let value = self.slots[self.tos & (STACK_SLOTS - 1)];
        self.tos = self.tos.wrapping_sub(1) & (STACK_SLOTS - 1);
        value
    }

    #[inline(always)]
    pub(crate) fn peek(&self) -> u32 {
        self.slots[self.tos & (STACK_SLOTS - 1)]
    }

    #[inline(always)]
    pub(crate) fn below(&self) -> usize {
        self.tos.wrapping_sub(1) & (STACK_SLOTS - 1)
    }

    /// `Push v` then a two-operand op, in one: `v` is written in the slot
    /// above the top (where the push puts it and where it stays visible),
    /// and the top becomes `top op v`.
    #[inline(always)]
    pub(crate) fn push_binary(&mut self, v: u32, f: impl FnOnce(u32, u32) -> u32) {
        self.slots[(self.tos + 1) & (STACK_SLOTS - 1)] = v;
        let top = &mut self.slots[self.tos & (STACK_SLOTS - 1)];
        *top = f(*top, v);
    }

    /// `Push a`, `Push v`, then a two-operand op, in one: both pushed
    /// slots are written as the pushes write them, and the first becomes
    /// the top, holding `a op v`.
    #[inline(always)]
    pub(crate) fn push_pair_binary(&mut self, a: u32, v: u32, f: impl FnOnce(u32, u32) -> u32) {
        let first = (self.tos + 1) & (STACK_SLOTS - 1);
        self.slots[(self.tos + 2) & (STACK_SLOTS - 1)] = v;
        self.slots[first] = f(a, v);
        self.tos = first;
    }

    #[inline(always)]
    pub(crate) fn binary(&mut self, f: impl FnOnce(u32, u32) -> u32) {
        let a = self.pop();
        let b = self.pop();
        self.push(f(b, a));
    }
}
