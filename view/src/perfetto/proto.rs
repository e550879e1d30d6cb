//! The part of Perfetto's public trace proto that the export writes, as
//! prost messages. Field numbers and types are those of
//! `protos/perfetto/trace/trace.proto`, `trace_packet.proto` and
//! `track_event/{track_descriptor,track_event,process_descriptor,
//! counter_descriptor,debug_annotation}.proto` (Apache-2.0, the Perfetto
//! authors); fields the export does not use are left out, which protobuf
//! readers accept. `track_event` and `track_descriptor` are members of
//! TracePacket's `data` oneof: the export sets one of them per packet.

/// `perfetto.protos.Trace`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// The packets.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `perfetto.protos.TracePacket`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Nanoseconds (the default boot clock).
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer's sequence.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// An event on a track.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// SEQ_INCREMENTAL_STATE_CLEARED = 1.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// A track.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `perfetto.protos.TrackDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// The track's id.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// Its name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// A process track.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// The parent track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// A counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.ProcessDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// PID.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// The name shown.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `perfetto.protos.CounterDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// `Unit`: UNIT_COUNT = 2.
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
}

/// `perfetto.protos.TrackEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Arguments.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// `Type`: SLICE_BEGIN 1, SLICE_END 2, INSTANT 3, COUNTER 4.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The track.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// Categories.
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// The event's name.
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// A counter's value.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

/// `perfetto.protos.DebugAnnotation`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// An unsigned value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// A string value.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// The argument's name.
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}

/// `TrackEvent.Type` values.
pub mod event_type {
    /// TYPE_SLICE_BEGIN.
    pub const SLICE_BEGIN: i32 = 1;
    /// TYPE_SLICE_END.
    pub const SLICE_END: i32 = 2;
    /// TYPE_INSTANT.
    pub const INSTANT: i32 = 3;
    /// TYPE_COUNTER.
    pub const COUNTER: i32 = 4;
}

/// `CounterDescriptor.Unit.UNIT_COUNT`.
pub const UNIT_COUNT: i32 = 2;
