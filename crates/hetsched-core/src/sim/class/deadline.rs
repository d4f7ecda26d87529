//! The deadline class's bandwidth enforcement (kernel/sched/deadline.c, v6.11):
//! `update_curr_dl()` and `dl_task_timer()`.

use crate::sim::*;

impl<'w> Sim<'w> {
    /// `update_curr_dl()`: charges the running deadline task's budget; throttles it when
    /// spent (`dl_runtime_exceeded()` → `start_dl_timer()`).
    pub(in crate::sim) fn update_curr_dl(&mut self, cpu: usize, tid: usize, now: Nanos) {
        let dt = now.saturating_sub(self.rqs[cpu].seg_start_dl);
        self.rqs[cpu].seg_start_dl = now;
        let t = &mut self.threads[tid];
        t.dl.runtime -= dt as i64;
        if t.dl.runtime <= 0 && !t.dl.throttled && t.state == TState::Runnable {
            t.dl.throttled = true;
            t.dl_gen = t.dl_gen.wrapping_add(1);
            let (gen, at) = (t.dl_gen, t.dl.next_period().max(now));
            let key = t.dl_key;
            self.rqs[cpu].dl.dequeue(tid, key);
            self.refresh_view(cpu);
            self.q.push(
                at,
                Ev::DlReplenish {
                    tid: tid as u32,
                    gen,
                },
            );
            self.set_resched(cpu);
        }
    }

    /// `dl_task_timer()`: replenish a throttled deadline task and queue it again.
    pub(in crate::sim) fn dl_replenish(&mut self, out: &mut Out<'_, '_>, tid: usize, now: Nanos) {
        let _ = out;
        let t = &mut self.threads[tid];
        if !t.dl.throttled {
            return;
        }
        t.dl.replenish(now);
        if t.state != TState::Runnable || t.class != Class::Dl {
            return;
        }
        let cpu = t.cpu;
        let d = t.dl.deadline;
        self.threads[tid].dl_key = self.rqs[cpu].dl.enqueue(tid, d);
        self.refresh_view(cpu);
        if self.rqs[cpu].curr != Some(tid) {
            self.wakeup_preempt(cpu, tid);
        }
    }
}
