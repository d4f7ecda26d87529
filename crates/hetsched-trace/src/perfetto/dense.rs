//! Perfetto's denser encoding of the events it has no message for
//! (`FtraceConfig.denser_generic_event_encoding`: added in perfetto v50, read by trace
//! processor since v52, traced_probes' default since v53).
//!
//! traced_probes gives each such event an `FtraceEvent` field number of its own from
//! 65536 up (`ProtoTranslationTable::kGenericEvtProtoMinPbFieldId`,
//! src/traced/probes/ftrace/proto_translation_table.h) and writes the event's fields in
//! that message, numbered 1, 2, … in the tracepoint's order; each `FtraceEventBundle` that
//! holds such events carries, after its events, one `GenericEventDescriptor` per event
//! kind in it (`CpuReader::Bundler::WriteGenericEventDescriptors()`, cpu_reader.cc): the
//! field number, the event's group and a serialised `DescriptorProto` naming the event and
//! its fields with their types (`ProtoTranslationTable::CreateGenericEventInternal()`:
//! signed integers as `TYPE_INT64`, unsigned as `TYPE_UINT64`, strings as
//! `TYPE_STRING`). Trace processor takes the descriptors while tokenizing a bundle
//! (`FtraceTokenizer::TokenizeFtraceBundle()`, `GenericFtraceTracker::AddDescriptor()`)
//! and puts the events in its `ftrace_event` table with their fields as arguments, as it
//! does the older `GenericFtraceEvent` (field 327), which names every field in every
//! event.
//!
//! Here the field numbers are fixed, in the order of [`EVENTS`] (traced_probes numbers
//! events in the order it meets them, so two boards' numbers differ anyway), and the
//! fields are the text trace's, with its names and in its order, as the older encoding
//! has them. traced_probes takes the names from the tracepoint's `format` file, which
//! for some events are not the `TP_printk` names the text shows: the interactive
//! governor's `cpu_id`, `curtarg`, `curactual`, `newtarg`, `targfreq`, `actualfreq`, the
//! schedfreq series' `request` and `total`. A non-negative value's varint is the same in
//! `int64` and `uint64`, so the types declared follow the tracepoints' C types (`int cpu`,
//! `int pid`) without changing a byte of the values; trace processor stores a
//! `TYPE_UINT64` field as an unsigned argument (`value_type` `uint`), where the legacy
//! layout's `uint_value` became a signed one. One exception: `cpufreq_sched_throttled`'s
//! `rem` is an `unsigned int` in the schedfreq series, but the engine gives the time left
//! signed, as the text prints it (`-?\d+`), so it is declared `TYPE_INT64`.

use crate::proto::{push_bytes, push_str, push_uint, WT_LEN};

/// `FtraceEventBundle.generic_event_descriptors = 11` (`GenericEventDescriptor`).
pub(super) const BUNDLE_DESCRIPTORS: u32 = 11;

/// The `FtraceEvent` field number of [`EVENTS`]`[0]`: traced_probes' first
/// (`kGenericEvtProtoMinPbFieldId`).
pub(super) const FIRST_ID: u32 = 65536;

/// A field's type in the descriptor (`FieldDescriptorProto.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    /// `TYPE_INT64` (3): a signed C integer.
    I,
    /// `TYPE_UINT64` (4): an unsigned C integer.
    U,
    /// `TYPE_STRING` (9): a C string or char array.
    S,
}

impl Ty {
    fn code(self) -> u64 {
        match self {
            Ty::I => 3,
            Ty::U => 4,
            Ty::S => 9,
        }
    }
}

/// One event kind: its tracepoint's group (`TRACE_SYSTEM`), name and fields.
#[derive(Debug)]
pub(super) struct Generic {
    pub(super) group: &'static str,
    pub(super) name: &'static str,
    pub(super) fields: &'static [(&'static str, Ty)],
}

use Ty::{I, S, U};

/// The events written in the dense encoding; the `i`-th is field [`FIRST_ID`]` + i`. The
/// `sched` group's PELT, util_est, capacity and overutilized events are LISA's
/// `sched_tp` module's (`TRACE_SYSTEM sched`), the HMP ones the HMP series'
/// (include/trace/events/sched.h), the others the interactive governor's
/// (`cpufreq_interactive`) and the schedfreq series' (`cpufreq_sched`).
pub(super) const EVENTS: [Generic; 19] = [
    Generic {
        group: "sched",
        name: "sched_pelt_se",
        fields: &[
            ("cpu", I),
            ("path", S),
            ("comm", S),
            ("pid", I),
            ("load", U),
            ("rbl_load", U),
            ("util", U),
            ("update_time", U),
        ],
    },
    Generic {
        group: "sched",
        name: "sched_pelt_cfs",
        fields: &[
            ("cpu", I),
            ("path", S),
            ("load", U),
            ("rbl_load", U),
            ("util", U),
            ("update_time", U),
        ],
    },
    Generic {
        group: "sched",
        name: "sched_pelt_rt",
        fields: &[("cpu", I), ("load", U), ("rbl_load", U), ("util", U)],
    },
    Generic {
        group: "sched",
        name: "sched_pelt_dl",
        fields: &[("cpu", I), ("load", U), ("rbl_load", U), ("util", U)],
    },
    Generic {
        group: "sched",
        name: "sched_util_est_se",
        fields: &[
            ("cpu", I),
            ("path", S),
            ("comm", S),
            ("pid", I),
            ("enqueued", U),
            ("ewma", U),
            ("util", U),
        ],
    },
    Generic {
        group: "sched",
        name: "sched_util_est_cfs",
        fields: &[
            ("cpu", I),
            ("path", S),
            ("enqueued", U),
            ("ewma", U),
            ("util", U),
        ],
    },
    Generic {
        group: "sched",
        name: "sched_cpu_capacity",
        fields: &[
            ("cpu", I),
            ("capacity", U),
            ("capacity_orig", U),
            ("capacity_curr", U),
        ],
    },
    Generic {
        group: "sched",
        name: "sched_overutilized",
        fields: &[("overutilized", I), ("span", S)],
    },
    Generic {
        group: "sched",
        name: "sched_hmp_migrate",
        fields: &[("comm", S), ("pid", I), ("dest", I), ("force", I)],
    },
    Generic {
        group: "sched",
        name: "sched_task_runnable_ratio",
        fields: &[("comm", S), ("pid", I), ("ratio", U)],
    },
    Generic {
        group: "cpufreq_interactive",
        name: "cpufreq_interactive_target",
        fields: LOADEVAL,
    },
    Generic {
        group: "cpufreq_interactive",
        name: "cpufreq_interactive_already",
        fields: LOADEVAL,
    },
    Generic {
        group: "cpufreq_interactive",
        name: "cpufreq_interactive_notyet",
        fields: LOADEVAL,
    },
    Generic {
        group: "cpufreq_interactive",
        name: "cpufreq_interactive_setspeed",
        fields: &[("cpu", U), ("targ", U), ("actual", U)],
    },
    Generic {
        group: "cpufreq_interactive",
        name: "cpufreq_interactive_boost",
        fields: &[("s", S)],
    },
    Generic {
        group: "cpufreq_interactive",
        name: "cpufreq_interactive_unboost",
        fields: &[("s", S)],
    },
    Generic {
        group: "cpufreq_sched",
        name: "cpufreq_sched_request_opp",
        fields: &[
            ("cpu", I),
            ("capacity", U),
            ("freq_new", U),
            ("requested_freq", U),
        ],
    },
    Generic {
        group: "cpufreq_sched",
        name: "cpufreq_sched_update_capacity",
        fields: &[
            ("cpu", I),
            ("set_cap", U),
            ("cfs", U),
            ("rt", U),
            ("dl", U),
            ("old_tot", U),
            ("new_tot", U),
        ],
    },
    Generic {
        group: "cpufreq_sched",
        name: "cpufreq_sched_throttled",
        fields: &[("rem", I)],
    },
];

/// The fields of the interactive governor's `loadeval` class.
const LOADEVAL: &[(&str, Ty)] = &[
    ("cpu", U),
    ("load", U),
    ("cur", U),
    ("actual", U),
    ("targ", U),
];

/// The index in [`EVENTS`] of the event named `name`.
pub(super) const fn index(name: &str) -> usize {
    let mut i = 0;
    while i < EVENTS.len() {
        if str_eq(EVENTS[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("not a dense generic event");
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Each event's `FtraceEventBundle.generic_event_descriptors` field, whole (its key and
/// length too), as traced_probes writes it: `GenericEventDescriptor.field_id` (1), then
/// `group_name` (3), then `event_descriptor` (2), a `DescriptorProto` of `name` (1) and
/// one `field` (2) per field, each a `FieldDescriptorProto` of `number` (3), `name` (1)
/// and `type` (5).
pub(super) fn descriptors() -> Vec<Vec<u8>> {
    EVENTS
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let mut desc = Vec::new();
            push_str(&mut desc, 1, g.name);
            let mut field = Vec::new();
            for (n, (name, ty)) in g.fields.iter().enumerate() {
                field.clear();
                push_uint(&mut field, 3, n as u64 + 1);
                push_str(&mut field, 1, name);
                push_uint(&mut field, 5, ty.code());
                push_bytes(&mut desc, 2, &field);
            }
            let mut ged = Vec::new();
            push_uint(&mut ged, 1, u64::from(FIRST_ID) + i as u64);
            push_str(&mut ged, 3, g.group);
            push_bytes(&mut ged, 2, &desc);
            let mut out = Vec::new();
            push_bytes(&mut out, BUNDLE_DESCRIPTORS, &ged);
            debug_assert_eq!(out[0], crate::proto::key1(BUNDLE_DESCRIPTORS, WT_LEN));
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_named_once_and_fits_the_tracker() {
        for (i, g) in EVENTS.iter().enumerate() {
            assert_eq!(index(g.name), i, "{}", g.name);
            // GenericFtraceTracker::AddDescriptor() skips a descriptor with field
            // numbers of 32 or more.
            assert!(!g.fields.is_empty() && g.fields.len() < 32, "{}", g.name);
        }
    }

    #[test]
    fn a_descriptor_as_traced_probes_writes_it() {
        let d = &descriptors()[index("sched_pelt_rt")];
        let mut want = vec![0x5a];
        let mut ged = vec![0x08, 0x82, 0x80, 0x04]; // field_id 65538
        ged.extend_from_slice(&[0x1a, 5]);
        ged.extend_from_slice(b"sched");
        let mut desc = vec![0x0a, 13];
        desc.extend_from_slice(b"sched_pelt_rt");
        for (n, (name, ty)) in [("cpu", 3u8), ("load", 4), ("rbl_load", 4), ("util", 4)]
            .iter()
            .enumerate()
        {
            let mut f = vec![0x18, n as u8 + 1, 0x0a, name.len() as u8];
            f.extend_from_slice(name.as_bytes());
            f.extend_from_slice(&[0x28, *ty]);
            desc.extend_from_slice(&[0x12, f.len() as u8]);
            desc.extend_from_slice(&f);
        }
        ged.extend_from_slice(&[0x12, desc.len() as u8]);
        ged.extend_from_slice(&desc);
        want.push(ged.len() as u8);
        want.extend_from_slice(&ged);
        assert_eq!(d, &want);
    }
}
