//! Pure renderers: API data in, Moab's exact text out. No I/O here.

pub mod access;
pub mod arrays;
pub mod checkjob;
pub mod checknode;
pub mod cluster;
pub mod creds;
pub mod fstree;
pub mod mdiag;
pub mod showbf;
pub mod showq;
pub mod staging;
pub mod stats;
pub mod xml;
