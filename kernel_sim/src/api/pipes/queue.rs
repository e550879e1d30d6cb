//! The bounded byte queue behind both kinds of pipe: one per anonymous
//! pipe (`pipes.rs`), one per direction of a named pipe instance
//! (`npipes.rs`), which also keeps the lengths of the messages queued.
//! It owns the capacities OS/2 allows a pipe.

use std::collections::VecDeque;

/// The capacity a pipe gets when asked for 0 bytes.
pub(crate) const DEFAULT_SIZE: usize = 4096;
/// The largest capacity of one pipe (and the longest message).
pub(crate) const MAX_SIZE: usize = 65504;

/// The capacity of a pipe asked for `asked` bytes: 0 gives the default,
/// more than [`MAX_SIZE`] is cut to it.
pub(crate) fn capacity_for(asked: u32) -> usize {
    match asked as usize {
        0 => DEFAULT_SIZE,
        n => n.min(MAX_SIZE),
    }
}

/// Bytes queued in one direction, at most `cap` of them (a message
/// written into an empty queue may be longer), and the lengths of the
/// messages among them, oldest first.
#[derive(Debug)]
pub(crate) struct Queue {
    data: VecDeque<u8>,
    msgs: VecDeque<usize>,
    cap: usize,
}

impl Queue {
    /// An empty queue of `cap` bytes.
    pub(crate) fn new(cap: usize) -> Queue {
        Queue {
            data: VecDeque::new(),
            msgs: VecDeque::new(),
            cap,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Bytes queued.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Bytes that fit before the queue is full.
    pub(crate) fn room(&self) -> usize {
        self.cap.saturating_sub(self.data.len())
    }

    /// The length of the oldest message (what is left of it).
    pub(crate) fn next_message(&self) -> Option<usize> {
        self.msgs.front().copied()
    }

    /// The first `n` bytes, left queued.
    pub(crate) fn peek(&self, n: usize) -> Vec<u8> {
        self.data.iter().take(n).copied().collect()
    }

    /// Queues what fits of `data`: the count queued.
    pub(crate) fn push(&mut self, data: &[u8]) -> usize {
        let k = data.len().min(self.room());
        self.data.extend(&data[..k]);
        k
    }

    /// Queues `data` whole, as one message.
    pub(crate) fn push_message(&mut self, data: &[u8]) {
        self.data.extend(data);
        self.msgs.push_back(data.len());
    }

    /// Takes up to `n` bytes, keeping the message lengths in step.
    pub(crate) fn take(&mut self, n: usize) -> Vec<u8> {
        let out: Vec<u8> = self.data.drain(..n.min(self.data.len())).collect();
        let mut left = out.len();
        while left > 0 {
            let Some(front) = self.msgs.front_mut() else {
                break;
            };
            if *front > left {
                *front -= left;
                break;
            }
            left -= *front;
            self.msgs.pop_front();
        }
        out
    }

    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.msgs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_fit_and_messages_stay_in_step() {
        let mut q = Queue::new(8);
        assert_eq!(q.push(b"0123456789"), 8);
        assert_eq!(q.room(), 0);
        assert_eq!(q.take(3), b"012");
        q.clear();
        q.push_message(b"abc");
        q.push_message(b"de");
        assert_eq!(q.next_message(), Some(3));
        assert_eq!(q.take(2), b"ab");
        assert_eq!(q.next_message(), Some(1));
        assert_eq!(q.take(2), b"cd");
        assert_eq!(q.next_message(), Some(1));
        assert_eq!(q.peek(4), b"e");
        assert_eq!(capacity_for(0), DEFAULT_SIZE);
        assert_eq!(capacity_for(100_000), MAX_SIZE);
        assert_eq!(capacity_for(10), 10);
    }
}
