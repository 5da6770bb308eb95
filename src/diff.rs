//! What changes between two templates, and which changes replace resources.
