//! The poller's invariants, modelled with threads: a readiness event
//! racing a registration never loses the wake-up, close wakes every
//! waiter, cancellation releases the hold.

use super::*;
use crate::vm::task::Task;
use std::io::{Read, Write};
use std::sync::atomic::AtomicIsize;
use std::time::{Duration, Instant};

#[derive(Default)]
struct TestSink {
    holds: AtomicIsize,
    woken: Mutex<Vec<Arc<TaskCell>>>,
}

impl WakeSink for TestSink {
    fn wake(&self, task: Arc<TaskCell>) {
        self.woken.lock().push(task);
    }
    fn hold(&self) {
        self.holds.fetch_add(1, Ordering::SeqCst);
    }
    fn release_hold(&self) {
        let before = self.holds.fetch_sub(1, Ordering::SeqCst);
        assert!(before > 0, "a hold released twice");
    }
}

/// A poller with a thread of its own standing in for the scheduler's idle
/// workers: it waits and dispatches until stopped.
struct Driven {
    poller: Poller,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl std::ops::Deref for Driven {
    type Target = Poller;
    fn deref(&self) -> &Poller {
        &self.poller
    }
}

impl Driven {
    fn stop(self) {
        use crate::scheduler::NetPoll;
        self.stop.store(true, Ordering::SeqCst);
        self.poller.core().interrupt();
        self.thread.join().unwrap();
        self.poller.stop();
    }
}

fn driven(sink: Arc<TestSink>) -> Driven {
    use crate::scheduler::NetPoll;
    let poller = Poller::start(sink).expect("poller");
    let (core, stop) = (poller.core(), Arc::new(AtomicBool::new(false)));
    let s2 = stop.clone();
    let thread = std::thread::spawn(move || {
        while !s2.load(Ordering::SeqCst) {
            core.wait(None);
            core.dispatch();
        }
    });
    Driven { poller, stop, thread }
}

fn setup() -> (Arc<TestSink>, Driven, Arc<Source>, std::net::TcpStream) {
    let sink = Arc::new(TestSink::default());
    let poller = driven(sink.clone());
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (mine, _) = l.accept().unwrap();
    mine.set_nonblocking(true).unwrap();
    let src = Source::new(&poller, Sock::Stream(mine)).expect("register");
    (sink, poller, src, peer)
}

fn new_task() -> Arc<TaskCell> {
    Arc::new(TaskCell::new(1, Box::new(Task::new(1))))
}

/// What a worker does: arm, register the wait; a `Ready` is a wake-up too.
fn park(task: &Arc<TaskCell>, wait: &IoWait) -> bool {
    let gen = task.token.arm();
    let w = Waiter::new(task.clone(), gen);
    matches!(wait.register(w, &mut Vec::new(), &mut Vec::new()), Registered::Ready(Resume::Retry))
}

/// The race of the module docs, with the poller's `fire` on another
/// thread at every possible point around the registration: exactly one
/// side wakes the task, every time, and no hold is left behind.
#[test]
fn io_readiness_racing_a_registration_is_never_lost() {
    let (sink, poller, src, _peer) = setup();
    for i in 0..20_000 {
        let task = new_task();
        let seen = src.events(Direction::Read);
        let wait = IoWait::new(src.clone(), Direction::Read, seen, "test", None);
        let ready = std::thread::scope(|s| {
            let s2 = src.clone();
            let firer = s.spawn(move || s2.fire(Direction::Read, &mut Vec::new()));
            if i % 2 == 0 {
                std::hint::spin_loop();
            }
            let ready = park(&task, &wait);
            firer.join().unwrap();
            ready
        });
        let by_poller = sink.woken.lock().drain(..).count();
        assert_eq!(ready as usize + by_poller, 1, "iteration {i}: ready {ready}, poller woke {by_poller}");
        assert_eq!(sink.holds.load(Ordering::SeqCst), 0, "iteration {i}: holds balanced");
        assert_eq!(src.waiting(Direction::Read), 0);
    }
    poller.stop();
}

/// The same race end to end: a real peer writes while the task suspends
/// on `WouldBlock`; the poller must wake it every time.
#[test]
fn io_real_socket_wakeups_are_never_lost() {
    let (sink, poller, src, mut peer) = setup();
    let deadline = Duration::from_secs(10);
    for i in 0..300 {
        let task = new_task();
        let seen = src.events(Direction::Read);
        let mut buf = [0u8; 16];
        let got = {
            let g = src.enter().unwrap();
            let Sock::Stream(s) = &*g else { unreachable!() };
            (&*s).read(&mut buf)
        };
        assert!(matches!(got, Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock), "{got:?}");
        let writer = std::thread::spawn({
            let mut p = peer.try_clone().unwrap();
            move || p.write_all(&[i as u8]).unwrap()
        });
        let wait = IoWait::new(src.clone(), Direction::Read, seen, "test", None);
        let ready = park(&task, &wait);
        writer.join().unwrap();
        if !ready {
            let start = Instant::now();
            while sink.woken.lock().is_empty() {
                assert!(start.elapsed() < deadline, "iteration {i}: the wake-up was lost");
                std::thread::yield_now();
            }
            assert_eq!(sink.woken.lock().drain(..).count(), 1);
        }
        // The re-run finds the byte.
        let g = src.enter().unwrap();
        let Sock::Stream(s) = &*g else { unreachable!() };
        let start = Instant::now();
        loop {
            match (&*s).read(&mut buf) {
                Ok(1) => break,
                Ok(n) => panic!("read {n}"),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    assert!(start.elapsed() < deadline);
                    std::thread::yield_now();
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(buf[0], i as u8);
        assert_eq!(sink.holds.load(Ordering::SeqCst), 0);
    }
    peer.flush().unwrap();
    poller.stop();
}

#[test]
fn io_close_wakes_every_waiter_and_drops_the_socket() {
    let (sink, poller, src, mut peer) = setup();
    let (a, b) = (new_task(), new_task());
    let seen_r = src.events(Direction::Read);
    assert!(!park(&a, &IoWait::new(src.clone(), Direction::Read, seen_r, "r", None)));
    let seen_w = src.events(Direction::Write);
    assert!(!park(&b, &IoWait::new(src.clone(), Direction::Write, seen_w, "w", None)));
    assert_eq!(sink.holds.load(Ordering::SeqCst), 2);
    let mut woken = Vec::new();
    assert!(src.close(&mut woken));
    assert_eq!(woken.len(), 2, "both waiters woken");
    assert!(woken.iter().all(|t| matches!(t.resume.lock().get(), Some(Resume::Retry))));
    assert_eq!(sink.holds.load(Ordering::SeqCst), 0);
    assert!(src.enter().is_none(), "closed");
    assert!(src.take_woken_by_close(1));
    assert!(!src.close(&mut woken), "closing twice does nothing");
    // The fd was closed: the peer sees end of stream.
    peer.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(peer.read(&mut buf).unwrap(), 0);
    // A registration after the close is decided at once.
    let c = new_task();
    let seen = src.events(Direction::Read);
    assert!(park(&c, &IoWait::new(src.clone(), Direction::Read, seen, "r", None)));
    poller.stop();
}

#[test]
fn io_cancel_releases_the_hold() {
    let (sink, poller, src, _peer) = setup();
    let t = new_task();
    let seen = src.events(Direction::Read);
    assert!(!park(&t, &IoWait::new(src.clone(), Direction::Read, seen, "r", None)));
    assert_eq!(sink.holds.load(Ordering::SeqCst), 1);
    assert!(t.request_cancel(), "the canceller claims the wait");
    assert_eq!(sink.holds.load(Ordering::SeqCst), 0, "the cancel hook released the hold");
    assert_eq!(src.waiting(Direction::Read), 0);
    // A later event finds nothing to release.
    src.fire(Direction::Read, &mut Vec::new());
    assert_eq!(sink.holds.load(Ordering::SeqCst), 0);
    assert!(sink.woken.lock().is_empty());
    poller.stop();
}

/// A cancel that claims the task between arming and registering (so it
/// finds no hook to run) leaves no hold behind.
#[test]
fn io_cancel_before_registration_leaves_no_hold() {
    let (sink, poller, src, _peer) = setup();
    let t = new_task();
    let gen = t.token.arm();
    assert!(t.request_cancel());
    let seen = src.events(Direction::Read);
    let wait = IoWait::new(src.clone(), Direction::Read, seen, "r", None);
    let r = wait.register(Waiter::new(t.clone(), gen), &mut Vec::new(), &mut Vec::new());
    assert!(matches!(r, Registered::Queued));
    assert_eq!(sink.holds.load(Ordering::SeqCst), 0);
    assert_eq!(src.waiting(Direction::Read), 0);
    poller.stop();
}

fn task_with_id(id: u32) -> Arc<TaskCell> {
    Arc::new(TaskCell::new(id, Box::new(Task::new(id))))
}

/// The write lock: a second writer finds it busy and waits; every way the
/// holder's wait can end without a re-run gives the lock back — by ticket,
/// so a late release never frees a newer hold of the same task.
#[test]
fn io_write_lock_is_given_back_by_every_cancelled_wait() {
    let (sink, poller, src, _peer) = setup();
    let (a, b) = (task_with_id(7), task_with_id(8));
    // The socket's first writable edge comes once, after registration;
    // no other comes while nothing is written.
    let start = Instant::now();
    while src.events(Direction::Write) == 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    // A holds the lock and waits for the socket; B waits for the lock.
    let WriterLock::Acquired(t1) = src.lock_writer(7) else { panic!("free lock") };
    assert_eq!(src.lock_writer(7), WriterLock::Held(t1));
    assert!(!park(&a, &IoWait::new(src.clone(), Direction::Write, src.events(Direction::Write), "w", Some(t1))));
    assert_eq!(src.lock_writer(8), WriterLock::Busy);
    assert!(!park(&b, &IoWait::new(src.clone(), Direction::Write, src.events(Direction::Write), "w", None)));
    // Cancelling A frees the lock and wakes B, which then takes it.
    assert!(a.request_cancel());
    assert_eq!(sink.woken.lock().drain(..).map(|t| t.id).collect::<Vec<_>>(), vec![8]);
    let WriterLock::Acquired(t2) = src.lock_writer(8) else { panic!("B takes the lock") };
    assert_ne!(t1, t2);
    // A stale release (A's old ticket) does not free B's hold.
    src.release_ticket(t1);
    assert_eq!(src.lock_writer(7), WriterLock::Busy);
    src.unlock_writer(8);
    // A task cancelled before it suspended: its wait is dropped without
    // being registered, and the lock goes with it.
    let WriterLock::Acquired(t3) = src.lock_writer(7) else { panic!("free again") };
    drop(IoWait::new(src.clone(), Direction::Write, src.events(Direction::Write), "w", Some(t3)));
    assert!(matches!(src.lock_writer(8), WriterLock::Acquired(_)));
    // A cancel that claims before the registration (no hook yet).
    src.unlock_writer(8);
    let c = task_with_id(9);
    let WriterLock::Acquired(t4) = src.lock_writer(9) else { panic!("free") };
    let gen = c.token.arm();
    assert!(c.request_cancel());
    let wait = IoWait::new(src.clone(), Direction::Write, src.events(Direction::Write), "w", Some(t4));
    assert!(matches!(wait.register(Waiter::new(c.clone(), gen), &mut Vec::new(), &mut Vec::new()), Registered::Queued));
    assert!(matches!(src.lock_writer(8), WriterLock::Acquired(_)));
    assert_eq!(sink.holds.load(Ordering::SeqCst), 0);
    poller.stop();
}
