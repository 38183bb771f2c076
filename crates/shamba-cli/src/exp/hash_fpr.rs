use std::error::Error;
use super::{report::Report, ExpArgs};
pub fn run(_args: &ExpArgs) -> Result<Report, Box<dyn Error>> { Err("todo".into()) }
