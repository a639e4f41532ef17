/// `Array`, `ArrayView` and related multidimensional
pub mod arrays;

/// foundamental implementation for a `DenseMatrix` construct
pub mod matrix;

/// foundamental implementation for 1D constructs
pub mod vector;
