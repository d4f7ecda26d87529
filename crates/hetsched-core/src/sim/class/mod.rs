//! The scheduling classes (`struct sched_class`, kernel/sched/sched.h, v6.11), one module
//! each: the fair class (EEVDF or CFS), RT and deadline. The core calls them through
//! their hooks only.

mod deadline;
mod fair;
mod fair_select;
mod rt;

pub(in crate::sim) use fair_select::workload_may_use_idle_policy;
