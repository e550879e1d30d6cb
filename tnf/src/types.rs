//! The built-in TNF types this writer puts in every file's tag blocks, so
//! the file describes itself: the root `tnf_struct_type` (its own tag), the
//! metatypes of scalar, array, derived and probe type records, the scalars,
//! the derived types that name slots (`tnf_name`, `tnf_time_delta`, ...) and
//! the property markers (`tnf_tagged`, `tnf_struct`, ...).
//!
//! A reader finds a record's layout from its tag's type record: a struct
//! type lists `slot_types` and `slot_names`; a scalar gives `type_size`; an
//! array is `tag, self_size, elements`; a derived type inherits its base's
//! layout and adds properties (`tnf_opaque` prints in hex). A slot whose
//! type is tagged holds a 32-bit reference.

/// How one built-in type is laid out.
#[derive(Clone, Copy, Debug)]
pub enum Def {
    /// A struct: slots as (slot name, type name); the metatype names the
    /// kind of type record (`tnf_struct_type` or `tnf_probe_type`).
    Struct(&'static [(&'static str, &'static str)]),
    /// A scalar of this size and alignment.
    Scalar(u32, u32),
    /// An array: element type, header size.
    Array(&'static str, u32),
    /// Derived from a base type.
    Derived(&'static str),
    /// A property marker: a name and nothing else (scalar of size 0).
    Marker,
}

/// Slots of a struct type record (`tnf_struct_type`, the root).
pub const STRUCT_TYPE_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("tnf_name", "tnf_name"),
    ("tnf_properties", "tnf_properties"),
    ("tnf_slot_types", "tnf_slot_types"),
    ("tnf_type_size", "tnf_type_size"),
    ("tnf_slot_names", "tnf_slot_names"),
];
/// Slots of a probe type record: a struct type plus its attribute string.
pub const PROBE_TYPE_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("tnf_name", "tnf_name"),
    ("tnf_properties", "tnf_properties"),
    ("tnf_slot_types", "tnf_slot_types"),
    ("tnf_type_size", "tnf_type_size"),
    ("tnf_slot_names", "tnf_slot_names"),
    ("tnf_string", "tnf_string"),
];
/// Slots of a scalar type record.
pub const SCALAR_TYPE_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("tnf_name", "tnf_name"),
    ("tnf_properties", "tnf_properties"),
    ("tnf_type_size", "tnf_type_size"),
    ("tnf_align", "tnf_align"),
];
/// Slots of an array type record.
pub const ARRAY_TYPE_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("tnf_name", "tnf_name"),
    ("tnf_properties", "tnf_properties"),
    ("tnf_slot_types", "tnf_slot_types"),
    ("tnf_header_size", "tnf_header_size"),
    ("tnf_element_type", "tnf_element_type"),
];
/// Slots of a derived type record.
pub const DERIVED_TYPE_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("tnf_name", "tnf_name"),
    ("tnf_properties", "tnf_properties"),
    ("tnf_derived_base", "tnf_derived_base"),
];
/// Slots of the file header record.
pub const FILE_HEADER_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("file_version", "tnf_uint32"),
    ("file_header_size", "tnf_uint32"),
    ("file_log_size", "tnf_uint32"),
    ("block_header_size", "tnf_uint32"),
    ("block_size", "tnf_uint32"),
    ("directory_size", "tnf_uint32"),
    ("block_count", "tnf_uint32"),
    ("blocks_valid", "tnf_uint32"),
];
/// Slots of a block header.
pub const BLOCK_HEADER_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("generation", "tnf_uint32"),
    ("bytes_valid", "tnf_uint16"),
    ("A_lock", "tnf_uint8"),
    ("B_lock", "tnf_uint8"),
    ("next_block", "tnf_opaque"),
];
/// Slots of a user schedule record.
pub const SCHED_SLOTS: &[(&str, &str)] = &[
    ("tnf_tag", "tnf_tag"),
    ("tid", "tnf_thread_id"),
    ("lwpid", "tnf_lwpid"),
    ("pid", "tnf_pid"),
    ("time_base", "tnf_time_base"),
];

/// A built-in type: name, metatype (the type of its type record),
/// property names, layout.
pub type Builtin = (&'static str, &'static str, &'static [&'static str], Def);

/// A record type: a tagged struct with these slots.
const fn record(name: &'static str, slots: &'static [(&'static str, &'static str)]) -> Builtin {
    (
        name,
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(slots),
    )
}

/// An inline scalar of `size` bytes, aligned to its size.
const fn scalar(name: &'static str, size: u32) -> Builtin {
    (
        name,
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(size, size),
    )
}

/// A tagged array of `element` with an 8-byte header.
const fn array(name: &'static str, element: &'static str) -> Builtin {
    (
        name,
        "tnf_array_type",
        &["tnf_array", "tnf_tagged"],
        Def::Array(element, 8),
    )
}

/// A type derived from `base` with no property of its own.
const fn derived(name: &'static str, base: &'static str) -> Builtin {
    (
        name,
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived(base),
    )
}

/// Every built-in type ([`Builtin`]). The first entry is the root.
pub const BUILTINS: &[Builtin] = &[
    record("tnf_struct_type", STRUCT_TYPE_SLOTS),
    record("tnf_probe_type", PROBE_TYPE_SLOTS),
    record("tnf_scalar_type", SCALAR_TYPE_SLOTS),
    record("tnf_array_type", ARRAY_TYPE_SLOTS),
    record("tnf_derived_type", DERIVED_TYPE_SLOTS),
    record("tnf_file_header", FILE_HEADER_SLOTS),
    record("tnf_block_header", BLOCK_HEADER_SLOTS),
    record("tnf_sched_rec", SCHED_SLOTS),
    // property markers
    ("tnf_inline", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_tagged", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_scalar", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_array", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_struct", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_derived", "tnf_scalar_type", &[], Def::Marker),
    // scalars
    scalar("tnf_char", 1),
    scalar("tnf_int8", 1),
    scalar("tnf_uint8", 1),
    scalar("tnf_int16", 2),
    scalar("tnf_uint16", 2),
    scalar("tnf_int32", 4),
    scalar("tnf_uint32", 4),
    scalar("tnf_int64", 8),
    scalar("tnf_uint64", 8),
    scalar("tnf_float32", 4),
    scalar("tnf_float64", 8),
    // arrays
    array("tnf_string", "tnf_char"),
    array("tnf_type_array", "tnf_type"),
    array("tnf_name_array", "tnf_name"),
    // derived
    (
        "tnf_opaque",
        "tnf_derived_type",
        &["tnf_derived", "tnf_opaque"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_tag",
        "tnf_derived_type",
        &["tnf_derived", "tnf_tagged"],
        Def::Derived("tnf_opaque"),
    ),
    derived("tnf_type", "tnf_tag"),
    derived("tnf_probe_event", "tnf_tag"),
    derived("tnf_tag_arg", "tnf_tag"),
    derived("tnf_element_type", "tnf_tag"),
    derived("tnf_derived_base", "tnf_tag"),
    derived("tnf_name", "tnf_string"),
    derived("tnf_properties", "tnf_type_array"),
    derived("tnf_slot_types", "tnf_type_array"),
    derived("tnf_slot_names", "tnf_name_array"),
    derived("tnf_size", "tnf_uint32"),
    derived("tnf_type_size", "tnf_uint32"),
    derived("tnf_self_size", "tnf_uint32"),
    derived("tnf_header_size", "tnf_uint32"),
    derived("tnf_align", "tnf_uint32"),
    derived("tnf_time_base", "tnf_int64"),
    derived("tnf_time_delta", "tnf_uint32"),
    derived("tnf_pid", "tnf_int32"),
    derived("tnf_lwpid", "tnf_uint32"),
    derived("tnf_thread_id", "tnf_uint32"),
];

/// Size and alignment of a slot of the built-in type `name` (a tagged type
/// is a 4-byte reference).
pub fn slot_layout(name: &str) -> (u32, u32) {
    let mut name = name;
    for _ in 0..8 {
        let Some((_, _, props, def)) = BUILTINS.iter().find(|b| b.0 == name) else {
            return (4, 4);
        };
        if props.contains(&"tnf_tagged") {
            return (4, 4);
        }
        match def {
            Def::Scalar(size, align) => return (*size, *align),
            Def::Derived(base) => name = base,
            _ => return (4, 4),
        }
    }
    (4, 4)
}

/// The size of a struct with these slot types, each slot at its alignment.
pub fn struct_size<'a>(slot_types: impl IntoIterator<Item = &'a str>) -> u32 {
    let mut offset = 0u32;
    for t in slot_types {
        let (size, align) = slot_layout(t);
        offset = offset.next_multiple_of(align.max(1)) + size;
    }
    offset
}
