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

/// Every built-in type: name, metatype (the type of its type record),
/// property names, layout. The first entry is the root.
pub const BUILTINS: &[(&str, &str, &[&str], Def)] = &[
    (
        "tnf_struct_type",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(STRUCT_TYPE_SLOTS),
    ),
    (
        "tnf_probe_type",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(PROBE_TYPE_SLOTS),
    ),
    (
        "tnf_scalar_type",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(SCALAR_TYPE_SLOTS),
    ),
    (
        "tnf_array_type",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(ARRAY_TYPE_SLOTS),
    ),
    (
        "tnf_derived_type",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(DERIVED_TYPE_SLOTS),
    ),
    (
        "tnf_file_header",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(FILE_HEADER_SLOTS),
    ),
    (
        "tnf_block_header",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(BLOCK_HEADER_SLOTS),
    ),
    (
        "tnf_sched_rec",
        "tnf_struct_type",
        &["tnf_struct", "tnf_tagged"],
        Def::Struct(SCHED_SLOTS),
    ),
    // property markers
    ("tnf_inline", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_tagged", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_scalar", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_array", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_struct", "tnf_scalar_type", &[], Def::Marker),
    ("tnf_derived", "tnf_scalar_type", &[], Def::Marker),
    // scalars
    (
        "tnf_char",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(1, 1),
    ),
    (
        "tnf_int8",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(1, 1),
    ),
    (
        "tnf_uint8",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(1, 1),
    ),
    (
        "tnf_int16",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(2, 2),
    ),
    (
        "tnf_uint16",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(2, 2),
    ),
    (
        "tnf_int32",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(4, 4),
    ),
    (
        "tnf_uint32",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(4, 4),
    ),
    (
        "tnf_int64",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(8, 8),
    ),
    (
        "tnf_uint64",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(8, 8),
    ),
    (
        "tnf_float32",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(4, 4),
    ),
    (
        "tnf_float64",
        "tnf_scalar_type",
        &["tnf_scalar", "tnf_inline"],
        Def::Scalar(8, 8),
    ),
    // arrays
    (
        "tnf_string",
        "tnf_array_type",
        &["tnf_array", "tnf_tagged"],
        Def::Array("tnf_char", 8),
    ),
    (
        "tnf_type_array",
        "tnf_array_type",
        &["tnf_array", "tnf_tagged"],
        Def::Array("tnf_type", 8),
    ),
    (
        "tnf_name_array",
        "tnf_array_type",
        &["tnf_array", "tnf_tagged"],
        Def::Array("tnf_name", 8),
    ),
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
    (
        "tnf_type",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_tag"),
    ),
    (
        "tnf_probe_event",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_tag"),
    ),
    (
        "tnf_tag_arg",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_tag"),
    ),
    (
        "tnf_element_type",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_tag"),
    ),
    (
        "tnf_derived_base",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_tag"),
    ),
    (
        "tnf_name",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_string"),
    ),
    (
        "tnf_properties",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_type_array"),
    ),
    (
        "tnf_slot_types",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_type_array"),
    ),
    (
        "tnf_slot_names",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_name_array"),
    ),
    (
        "tnf_size",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_type_size",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_self_size",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_header_size",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_align",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_time_base",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_int64"),
    ),
    (
        "tnf_time_delta",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_pid",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_int32"),
    ),
    (
        "tnf_lwpid",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
    (
        "tnf_thread_id",
        "tnf_derived_type",
        &["tnf_derived"],
        Def::Derived("tnf_uint32"),
    ),
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
