//! arches-client (being written).
