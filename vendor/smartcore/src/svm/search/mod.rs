//! SVC and Grid Search

/// SVC search parameters
pub mod svc_params;
/// SVC search parameters
pub mod svr_params;
