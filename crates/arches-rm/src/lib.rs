//! arches-rm (being written).
