//! rt-app's synchronisation resources and what the kernel does underneath them.
//!
//! rt-app (`src/rt-app.c:run_event()`, scheduler-tools/rt-app master 2024) drives POSIX
//! objects from glibc; glibc drives futexes; the kernel's futex code decides who wakes.
//! This module keeps the state of each named resource and answers "who blocks, who wakes,
//! who owns"; the engine does the blocking and waking.
//!
//! | rt-app event | rt-app code | modelled as |
//! |---|---|---|
//! | `lock` | `pthread_mutex_lock` | free: take it; held: queue and block (futex wait) |
//! | `unlock` | `pthread_mutex_unlock` | release and wake the top waiter, which retries and may find it stolen (glibc `lll_unlock` + `futex_wake(1)`); with `pi_enabled`, ownership is handed to the top waiter (`FUTEX_UNLOCK_PI` → `rt_mutex` `wake_up_proxy`), and the owner runs at the top waiter's priority while it holds the lock (`rt_mutex_adjust_prio()`) |
//! | `wait` | `pthread_cond_wait(cond, mutex)` | release the mutex, queue on the condition, block; once woken, reacquire the mutex (retry; with PI the waiter is requeued onto the mutex, `FUTEX_CMP_REQUEUE_PI`) |
//! | `signal` / `broad` | `pthread_cond_signal` / `_broadcast` | wake the first / every waiter; a signal with no waiter is lost |
//! | `sync` | signal then wait | as both |
//! | `barrier` | mutex + condition + `waiting` counter set to the number of references | the last arrival broadcasts; the others decrement `waiting`, wait, and increment it when they run again |
//! | `suspend` / `resume` | `pthread_cond_wait` / `_broadcast` on a condition named after the suspending task | every thread of that task that is suspended wakes; a resume with none suspended is lost |
//! | `sem_wait` / `sem_post` | POSIX semaphore, initial 0 | post increments and wakes one waiter, which retries the decrement (glibc `__new_sem_wait_slow`) |
//!
//! Wait queues are ordered as the kernel's futex hash-bucket `plist` orders them
//! (`futex_q` priority `min(normal_prio, MAX_RT_PRIO)`, kernel/futex/core.c v6.11): RT
//! waiters by priority, every other waiter FIFO after them.

use std::collections::BTreeMap;

/// A blocked thread's reason (what the deadlock report names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOn {
    /// Not blocked on a resource (running, runnable, or in a timed sleep).
    Nothing,
    /// Waiting for a mutex.
    Mutex(usize),
    /// Waiting on a condition (with the mutex it reacquires).
    Cond(usize, usize),
    /// Waiting at a barrier.
    Barrier(usize),
    /// Suspended until a `resume` of that name.
    Suspend(usize),
    /// Waiting on a semaphore.
    Sem(usize),
    /// Waiting at rt-app's start barrier (`threads_barrier`) for the other threads.
    StartBarrier,
}

/// What a woken thread must do first when it runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Nothing: continue the program.
    None,
    /// Take the mutex (woken by an unlock or a condition; it may be stolen meanwhile).
    Lock(usize),
    /// `waiting += 1` of a barrier after its broadcast.
    Barrier(usize),
    /// Decrement the semaphore.
    Sem(usize),
}

/// A wait queue ordered as a futex `plist`: key = priority (lower first), FIFO within.
#[derive(Debug, Clone, Default)]
pub struct WaitQueue {
    q: Vec<(i32, u64, usize)>,
    seq: u64,
}

impl WaitQueue {
    /// Queues `tid` with futex priority `prio` (`min(normal_prio, 100)`).
    pub fn push(&mut self, tid: usize, prio: i32) {
        let key = prio.min(100);
        self.seq += 1;
        let pos = self
            .q
            .partition_point(|&(p, s, _)| (p, s) <= (key, self.seq));
        self.q.insert(pos, (key, self.seq, tid));
    }

    /// Removes and returns the top waiter.
    pub fn pop(&mut self) -> Option<usize> {
        if self.q.is_empty() {
            None
        } else {
            Some(self.q.remove(0).2)
        }
    }

    /// The top waiter, if any.
    pub fn top(&self) -> Option<usize> {
        self.q.first().map(|&(_, _, t)| t)
    }

    /// Removes every waiter, in wake order.
    pub fn drain(&mut self) -> Vec<usize> {
        self.q.drain(..).map(|(_, _, t)| t).collect()
    }

    /// Number of waiters.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Waiter thread ids in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.q.iter().map(|&(_, _, t)| t)
    }
}

/// A `pthread_mutex_t` (PTHREAD_PRIO_INHERIT when `pi_enabled`).
#[derive(Debug, Clone, Default)]
pub struct Mutex {
    /// Name in the workload.
    pub name: String,
    /// Owner thread.
    pub owner: Option<usize>,
    /// Blocked lockers.
    pub waiters: WaitQueue,
}

/// A `pthread_cond_t`.
#[derive(Debug, Clone, Default)]
pub struct Cond {
    /// Name in the workload.
    pub name: String,
    /// Waiters with the mutex each must reacquire.
    pub waiters: WaitQueue,
    /// Mutex per waiter (by thread id).
    pub mutex_of: BTreeMap<usize, usize>,
}

/// rt-app's barrier resource.
#[derive(Debug, Clone, Default)]
pub struct Barrier {
    /// Name in the workload.
    pub name: String,
    /// rt-app's `res.barrier.waiting`: references minus one, minus the threads waiting.
    pub waiting: i64,
    /// Number of participants (references in the workload).
    pub participants: i64,
    /// Waiting threads.
    pub waiters: WaitQueue,
}

/// A POSIX semaphore (initial value 0).
#[derive(Debug, Clone, Default)]
pub struct Sem {
    /// Name in the workload.
    pub name: String,
    /// Value.
    pub value: u64,
    /// Blocked waiters.
    pub waiters: WaitQueue,
}

/// Every named resource of a run. Names index each kind separately, as rt-app's
/// `get_resource_index(name, type)` does.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    /// Mutexes.
    pub mutexes: Vec<Mutex>,
    /// Conditions.
    pub conds: Vec<Cond>,
    /// Barriers.
    pub barriers: Vec<Barrier>,
    /// Semaphores.
    pub sems: Vec<Sem>,
    /// Suspend conditions, by the name `suspend` and `resume` use.
    pub suspends: Vec<Cond>,
    index: BTreeMap<(u8, String), usize>,
}

/// Resource kinds, for name lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Mutex.
    Mutex = 0,
    /// Condition.
    Cond = 1,
    /// Barrier.
    Barrier = 2,
    /// Semaphore.
    Sem = 3,
    /// Suspend/resume condition.
    Suspend = 4,
}

impl Resources {
    /// The index of the named resource of `kind`, creating it.
    pub fn get(&mut self, kind: Kind, name: &str) -> usize {
        if let Some(&i) = self.index.get(&(kind as u8, name.to_string())) {
            return i;
        }
        let i = match kind {
            Kind::Mutex => {
                self.mutexes.push(Mutex {
                    name: name.into(),
                    ..Mutex::default()
                });
                self.mutexes.len() - 1
            }
            Kind::Cond => {
                self.conds.push(Cond {
                    name: name.into(),
                    ..Cond::default()
                });
                self.conds.len() - 1
            }
            Kind::Barrier => {
                self.barriers.push(Barrier {
                    name: name.into(),
                    ..Barrier::default()
                });
                self.barriers.len() - 1
            }
            Kind::Suspend => {
                self.suspends.push(Cond {
                    name: name.into(),
                    ..Cond::default()
                });
                self.suspends.len() - 1
            }
            Kind::Sem => {
                self.sems.push(Sem {
                    name: name.into(),
                    ..Sem::default()
                });
                self.sems.len() - 1
            }
        };
        self.index.insert((kind as u8, name.to_string()), i);
        i
    }

    /// Tries to take mutex `m` for `tid`; true if taken.
    pub fn try_lock(&mut self, m: usize, tid: usize) -> bool {
        let mx = &mut self.mutexes[m];
        if mx.owner.is_none() {
            mx.owner = Some(tid);
            true
        } else {
            false
        }
    }

    /// Releases mutex `m`. Without PI the mutex becomes free and the top waiter is
    /// returned to be woken (it retries). With PI ownership passes to the top waiter,
    /// which is returned to be woken holding it.
    pub fn unlock(&mut self, m: usize, pi: bool) -> Option<usize> {
        let mx = &mut self.mutexes[m];
        let next = mx.waiters.pop();
        mx.owner = if pi { next } else { None };
        next
    }

    /// The highest waiter priority over the PI mutexes `tid` owns (lower is higher), for
    /// `rt_mutex_adjust_prio()`.
    pub fn top_pi_waiter_prio(&self, tid: usize, prio_of: impl Fn(usize) -> i32) -> Option<i32> {
        self.mutexes
            .iter()
            .filter(|m| m.owner == Some(tid))
            .flat_map(|m| m.waiters.iter())
            .map(prio_of)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plist_orders_rt_by_prio_then_fifo() {
        let mut q = WaitQueue::default();
        q.push(1, 120);
        q.push(2, 120);
        q.push(3, 10); // RT prio 10 jumps ahead
        q.push(4, 139);
        q.push(5, 50);
        // non-RT priorities all collapse to 100: FIFO among 1, 2, 4
        assert_eq!(q.drain(), vec![3, 5, 1, 2, 4]);
    }

    #[test]
    fn unlock_without_pi_frees_and_wakes_top() {
        let mut r = Resources::default();
        let m = r.get(Kind::Mutex, "m");
        assert!(r.try_lock(m, 0));
        assert!(!r.try_lock(m, 1));
        r.mutexes[m].waiters.push(1, 120);
        assert_eq!(r.unlock(m, false), Some(1));
        assert_eq!(r.mutexes[m].owner, None, "free: the woken waiter retries");
        assert!(r.try_lock(m, 2), "a third thread can steal it");
    }

    #[test]
    fn unlock_with_pi_hands_over() {
        let mut r = Resources::default();
        let m = r.get(Kind::Mutex, "m");
        assert!(r.try_lock(m, 0));
        r.mutexes[m].waiters.push(1, 120);
        r.mutexes[m].waiters.push(2, 20);
        assert_eq!(r.top_pi_waiter_prio(0, |t| [0, 120, 20][t]), Some(20));
        assert_eq!(r.unlock(m, true), Some(2));
        assert_eq!(r.mutexes[m].owner, Some(2));
    }

    #[test]
    fn names_are_per_kind() {
        let mut r = Resources::default();
        let a = r.get(Kind::Mutex, "x");
        let b = r.get(Kind::Cond, "x");
        assert_eq!((a, b), (0, 0));
        assert_eq!(r.get(Kind::Mutex, "x"), 0);
        assert_eq!(r.get(Kind::Mutex, "y"), 1);
    }
}
