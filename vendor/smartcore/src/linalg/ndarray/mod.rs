/// matrix bindings
pub mod matrix;
/// vector bindings
pub mod vector;
