//! arches-config (being written).
