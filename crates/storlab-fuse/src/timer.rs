//! Replies that are due later: the FUSE worker does the backing I/O at
//! once and hands the reply here with the time the modelled volume would
//! have completed it. One thread sleeps until the earliest is due, so a
//! worker never sleeps and 32 I/Os in flight need no 32 threads.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// Longest the timer yields (spins) before a deadline instead of sleeping.
const MAX_EARLY: Duration = Duration::from_micros(200);

struct Due {
    at: Instant,
    seq: u64,
    job: Job,
}

impl PartialEq for Due {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Due {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A reply to send at a time; `None` ends the thread once all before it ran.
type Msg = Option<(Instant, Job)>;

pub struct Timer {
    tx: Option<Sender<Msg>>,
    thread: Option<JoinHandle<()>>,
}

impl Timer {
    pub fn start() -> Timer {
        let (tx, rx) = channel::<Msg>();
        let thread = std::thread::Builder::new()
            .name("storlab-timer".into())
            .spawn(move || {
                // The default 50 µs timer slack would add itself to every latency.
                unsafe {
                    libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
                }
                let mut heap: BinaryHeap<Reverse<Due>> = BinaryHeap::new();
                let mut seq = 0u64;
                // How late a sleep ends (moving average): sleep that much
                // less, then yield until the deadline, so replies are neither
                // early nor late by the scheduler's wake-up delay.
                let mut late = Duration::from_micros(20);
                let mut open = true;
                while open || !heap.is_empty() {
                    let got = match heap.peek() {
                        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                        Some(Reverse(d)) => {
                            let now = Instant::now();
                            let wake = d.at.checked_sub(late).unwrap_or(d.at);
                            if wake <= now {
                                Err(RecvTimeoutError::Timeout)
                            } else {
                                let r = if open {
                                    rx.recv_timeout(wake - now)
                                } else {
                                    std::thread::sleep(wake - now);
                                    Err(RecvTimeoutError::Timeout)
                                };
                                if matches!(r, Err(RecvTimeoutError::Timeout)) {
                                    let over = Instant::now().saturating_duration_since(wake).min(MAX_EARLY);
                                    late = (late * 7 + over) / 8;
                                }
                                r
                            }
                        }
                    };
                    match got {
                        Ok(None) => open = false,
                        Ok(Some((at, job))) => {
                            seq += 1;
                            heap.push(Reverse(Due { at, seq, job }));
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => open = false,
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                    if let Some(Reverse(d)) = heap.peek() {
                        while Instant::now() < d.at && d.at - Instant::now() <= MAX_EARLY {
                            std::thread::yield_now();
                        }
                    }
                    let now = Instant::now();
                    while let Some(Reverse(d)) = heap.peek() {
                        if d.at > now {
                            break;
                        }
                        let Reverse(d) = heap.pop().expect("peeked");
                        (d.job)();
                    }
                }
            })
            .expect("timer thread starts");
        Timer { tx: Some(tx), thread: Some(thread) }
    }

    pub fn sender(&self) -> TimerHandle {
        TimerHandle { tx: self.tx.clone().expect("timer running") }
    }

    /// Runs what is still due (replies are owed), then ends the thread.
    pub fn stop(&mut self) {
        // Handles may live on (in the file systems' shared state): tell the
        // thread to end after what it was sent.
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(None);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.stop();
    }
}

#[derive(Clone)]
pub struct TimerHandle {
    tx: Sender<Msg>,
}

impl TimerHandle {
    /// Runs `job` at `at`, or now when that has passed.
    pub fn at(&self, at: Instant, job: impl FnOnce() + Send + 'static) {
        if at <= Instant::now() {
            job();
        } else if let Err(e) = self.tx.send(Some((at, Box::new(job)))) {
            if let Some((_, job)) = e.0 {
                job();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn jobs_run_in_deadline_order_and_not_before_it() {
        let mut t = Timer::start();
        let h = t.sender();
        let log = Arc::new(Mutex::new(Vec::new()));
        let t0 = Instant::now();
        for (i, ms) in [(0, 30u64), (1, 10), (2, 20)] {
            let log = log.clone();
            h.at(t0 + Duration::from_millis(ms), move || log.lock().unwrap().push((i, t0.elapsed())));
        }
        drop(h);
        t.stop();
        let log = log.lock().unwrap();
        assert_eq!(log.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 2, 0]);
        // Never before the deadline.
        for (i, at) in log.iter() {
            let due = [30u64, 10, 20][*i as usize];
            assert!(*at >= Duration::from_millis(due), "job {i} ran at {at:?}, due {due} ms");
        }
    }
}
