//! Writing templates to a directory, atomically, and checking committed
//! templates for staleness.
