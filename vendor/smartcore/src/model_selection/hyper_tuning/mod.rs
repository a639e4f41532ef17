mod grid_search;
pub use grid_search::{GridSearchCV, GridSearchCVParameters};
