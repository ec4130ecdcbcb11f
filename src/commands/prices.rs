//! `nanoload prices [TEXT]`: the table these flags make, on stdout.

use super::CommandError;
use crate::config::Pricing;
use crate::summary::ExitCode;

/// Print the price table a load prices LLM calls with: where it comes
/// from, how old the built-in prices are, the rows (USD per million
/// tokens), and how to change it (`--prices FILE`'s format, `--price`,
/// `--free`).
///
/// With the flags (--prices, --prices-replace, --price, --free) it prints
/// the table they make. Every command that shows a cost takes the same
/// flags: a load and a ledger's export price their calls with them;
/// `report`, `usage`, `sql`, `mcp` and `otlp` of a load's output price its
/// calls again from their tokens with them, by the load's rules (the
/// load's own flags are not kept: give them again), and say so.
///
/// Exit codes: 0 printed; 2 a bad --prices file, --price or --free.
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct PricesArgs {
    /// Only the models whose name contains TEXT (case-insensitive).
    #[arg(value_name = "TEXT")]
    pub pattern: Option<String>,

    /// The table's flags, as every command that shows a cost takes them.
    #[command(flatten)]
    pub pricing: Pricing,
}

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
