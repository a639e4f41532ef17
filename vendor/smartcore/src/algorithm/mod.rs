pub mod neighbour;
pub(crate) mod sort;
