//! arches-store (being written).
