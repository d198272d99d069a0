//! The `mempool-trace` command line tool.

fn main() {}
