//! arches-sim (being written).
