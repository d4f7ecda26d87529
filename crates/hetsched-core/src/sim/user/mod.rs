//! User space: rt-app's threads. The interpreter of the workload's program
//! ([`program`], `interp`) and the pthread synchronisation objects ([`sync`], `futex`)
//! run as user code and enter the kernel only through system calls: block (a timed sleep
//! or a futex wait), wake, `sched_setattr`/`set_user_nice`, `clone`, `exit`,
//! `sched_yield`.

mod futex;
mod interp;
pub mod program;
pub mod sync;
