//! `nanoload prices [TEXT]`: the table these flags make, on stdout.

use super::CommandError;
use crate::cli::PricesArgs;
use crate::summary::ExitCode;

pub fn run(a: PricesArgs) -> Result<ExitCode, CommandError> {
    let table = a.pricing.table()?;
    let file = (a.pricing.prices.as_ref()).map(|p| p.to_string_lossy().into_owned());
    let given: Vec<String> = (a.pricing.price.iter())
        .filter_map(|p| crate::prices::parse_price_flag(p).ok().map(|(m, _)| m))
        .collect();
    let text = crate::prices::listing(
        &table,
        file.as_deref().map(|f| (f, a.pricing.prices_replace)),
        &given,
        a.pattern.as_deref(),
        chrono::Utc::now().date_naive(),
    );
    // a closed pipe (`| head`) is not an error
    let _ = super::print(&text);
    Ok(ExitCode::Ok)
}
