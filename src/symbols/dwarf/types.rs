//! Types as DWARF describes them: base types, pointers, references, arrays,
//! structs/classes/unions (with bit-fields and Rust enum variant parts), enums, typedefs,
//! qualifiers and function types. A type refers to the types it is made of by `TypeId` (the
//! DIE's offset in `.debug_info`), so recursive types such as linked lists cost nothing to
//! resolve. Reading them from their DIEs is `type_read`.

/// A type: the offset of its DIE in `.debug_info`. `None` where a type is expected means
/// `void`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub usize);

/// Ids from here on are types scry made (no DIE has such an offset).
pub const SYNTHETIC_BASE: usize = 1 << 60;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Signed,
    Unsigned,
    Float,
    Bool,
    SignedChar,
    UnsignedChar,
    /// `char8_t`, `char16_t`, `char32_t`, Rust `char`: Unicode code units.
    Utf,
    /// C's `_Complex float/double/long double`: the real part, then the imaginary one.
    ComplexFloat,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Struct,
    Class,
    Union,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: Option<String>,
    pub ty: Option<TypeId>,
    /// Byte offset from the start of the containing object.
    pub offset: u64,
    /// A bit-field: (bit offset from the start of the containing object, width in bits).
    pub bits: Option<(u64, u64)>,
    /// A base class (`DW_TAG_inheritance`).
    pub base: bool,
    pub artificial: bool,
    /// A virtual base's location expression (its bytes): where it is depends on the object
    /// (the Itanium ABI reads the offset from the vtable), so `offset` says nothing of it.
    pub vbase: Option<Vec<u8>>,
}

/// A C++ static data member: declared inside its class, stored (if anywhere) in a variable of
/// its own, whose DIE names this declaration by DW_AT_specification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticMember {
    pub name: String,
    pub ty: Option<TypeId>,
    /// The declaration's DIE (`DW_TAG_member` in DWARF 4, `DW_TAG_variable` in DWARF 5).
    pub decl: usize,
    /// The index in `members` of the member it is declared before (`members.len()`: after
    /// them all), so it prints in declaration order.
    pub before: usize,
}

/// One variant of a Rust enum (`DW_TAG_variant`): the discriminant value that selects it
/// (none for the default variant) and the member holding its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub discr_value: Option<i128>,
    pub member: Member,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantPart {
    /// The member holding the discriminant (absent for single-variant enums).
    pub discr: Option<Member>,
    pub variants: Vec<Variant>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Base(Encoding),
    Pointer(Option<TypeId>),
    Reference {
        target: Option<TypeId>,
        rvalue: bool,
    },
    /// Element type and the count of each dimension, outermost first (`None`: unknown, as for
    /// a flexible array member).
    Array {
        elem: Option<TypeId>,
        counts: Vec<Option<u64>>,
    },
    Aggregate {
        kind: AggKind,
        members: Vec<Member>,
        /// C++ static data members, in no object's bytes (none for C and Rust).
        statics: Vec<StaticMember>,
        variants: Option<VariantPart>,
        /// Generic parameters (`DW_TAG_template_type_parameter`): `T` of a Rust `Vec<T>`.
        params: Vec<(String, Option<TypeId>)>,
        /// Only declared here (`struct foo;`): the definition is elsewhere.
        declaration: bool,
    },
    Enum {
        enumerators: Vec<(String, i128)>,
        signed: bool,
        /// A C++ `enum class` (`DW_AT_enum_class`): its enumerators live in its own scope.
        scoped: bool,
    },
    Typedef(Option<TypeId>),
    /// `const`, `volatile`, `restrict`, `_Atomic`.
    Qualified(&'static str, Option<TypeId>),
    Function {
        ret: Option<TypeId>,
        params: Vec<Option<TypeId>>,
        varargs: bool,
    },
    /// A C++ pointer to a member of `class`: to a data member (its offset, 8 bytes; -1 is
    /// null) or, `target` a function type, to a member function (Itanium's pointer and
    /// this-adjustment, 16 bytes; an odd pointer is 1 + a vtable offset).
    MemberPointer {
        class: Option<TypeId>,
        target: Option<TypeId>,
    },
    /// Anything else DWARF can say (`nullptr_t`): shown by name and size.
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Type {
    pub id: TypeId,
    pub name: Option<String>,
    pub size: Option<u64>,
    pub kind: Kind,
    /// Declared in a Rust unit (names and layouts follow Rust's conventions).
    pub rust: bool,
    /// Declared in a C unit (`struct` and `enum` are part of a type's name).
    pub c: bool,
}
