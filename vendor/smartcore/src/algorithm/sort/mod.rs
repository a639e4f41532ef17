pub mod heap_select;
pub mod quick_sort;
