//! The transaction rows as tables: one per transaction workload, one for the plain writes,
//! and the cost of the transaction path (a one-key read-modify-write in a transaction
//! against the same get + put without one, and against a plain put).

use crate::engine::Variant;
use crate::workload::transactions::TxMeasurement;

/// "1.23x", or "-" when either side is zero.
fn ratio(num: f64, den: f64) -> String {
    if num <= 0.0 || den <= 0.0 {
        "-".into()
    } else {
        format!("{:.2}x", num / den)
    }
}

/// Shamba's row of the same table and phase.
fn shamba_row<'a>(rows: &'a [TxMeasurement], row: &TxMeasurement) -> Option<&'a TxMeasurement> {
    rows.iter().find(|r| r.table == row.table && r.phase == row.phase && r.engine == Variant::Shamba)
}

/// Print every table; nothing when no transaction rows ran.
pub fn print(rows: &[TxMeasurement]) {
    if rows.is_empty() {
        return;
    }
    let mut tables: Vec<&str> = Vec::new();
    for r in rows {
        if !tables.contains(&r.table.as_str()) {
            tables.push(&r.table);
        }
    }
    for table in tables {
        println!();
        println!("== {table} ==");
        println!(
            "{:<21} {:<10} {:>11} {:>10} {:>9} {:>9} {:>10} {:>10} {:>9}",
            "phase", "engine", "ops/s", "confl/op", "p50 us", "p99 us", "cpu us/op", "S/p ops/s", "S/p cpu"
        );
        let in_table: Vec<&TxMeasurement> = rows.iter().filter(|r| r.table == table).collect();
        let mut phases: Vec<&str> = Vec::new();
        for r in &in_table {
            if !phases.contains(&r.phase.as_str()) {
                phases.push(&r.phase);
            }
        }
        for phase in phases {
            for r in in_table.iter().filter(|r| r.phase == phase) {
                let (ops_ratio, cpu_ratio) = match shamba_row(rows, r) {
                    Some(s) if r.engine != Variant::Shamba => {
                        (ratio(s.ops_per_sec, r.ops_per_sec), ratio(r.cpu_us_per_op(), s.cpu_us_per_op()))
                    }
                    _ => (String::new(), String::new()),
                };
                println!(
                    "{:<21} {:<10} {:>11.0} {:>10.4} {:>9.1} {:>9.1} {:>10.2} {:>10} {:>9}",
                    r.phase,
                    r.engine.name(),
                    r.ops_per_sec,
                    r.conflicts_per_op,
                    r.p50_us,
                    r.p99_us,
                    r.cpu_us_per_op(),
                    ops_ratio,
                    cpu_ratio
                );
            }
        }
    }
    print_cost(rows);
    println!();
    println!("An op is a committed transaction (conflicted attempts run again at once, counted in confl/op;");
    println!("its latency from the first begin to the commit that succeeded) or one plain write. cpu us/op:");
    println!("client threads only, summed (steadier than ops/s on a loaded machine). S/p = Shamba / peer:");
    println!("ops/s above 1.00x and cpu (peer / Shamba) above 1.00x mean Shamba is faster. cpu tx-(g+p): client");
    println!("CPU a transaction costs over the same get + put without one, microseconds.");
}

/// `engine`'s row whose table starts with `table` and whose phase is `phase`.
fn row_of<'a>(rows: &'a [TxMeasurement], engine: Variant, table: &str, phase: &str) -> Option<&'a TxMeasurement> {
    rows.iter().find(|r| r.engine == engine && r.table.starts_with(table) && r.phase == phase)
}

/// Per engine and thread count: one-key transactions beside get + put and put, in ops/s
/// and in client CPU per op (steadier on a loaded machine).
fn print_cost(rows: &[TxMeasurement]) {
    let mut engines: Vec<Variant> = Vec::new();
    let mut threads: Vec<usize> = Vec::new();
    for r in rows {
        if !engines.contains(&r.engine) {
            engines.push(r.engine);
        }
        if !threads.contains(&r.threads) {
            threads.push(r.threads);
        }
    }
    println!();
    println!("== cost of the transaction path: 1-key read-modify-write in a transaction, get + put, put ==");
    println!(
        "{:<10} {:>7} {:>9} {:>11} {:>9} {:>12} {:>9} {:>14} {:>11} {:>13}",
        "engine",
        "threads",
        "tx/s",
        "get+put/s",
        "put/s",
        "tx cpu us",
        "g+p cpu",
        "put cpu us",
        "tx/(g+p)",
        "cpu tx-(g+p)"
    );
    for &e in &engines {
        for &t in &threads {
            let plural = if t == 1 { "thread" } else { "threads" };
            let tx = row_of(rows, e, "transactions: read-modify-write of 1 key", &format!("{t} {plural}"));
            let get_put = row_of(rows, e, "plain writes", &format!("get + put, {t} {plural}"));
            let put = row_of(rows, e, "plain writes", &format!("put, {t} {plural}"));
            let ops = |r: Option<&TxMeasurement>| r.map_or("-".to_string(), |r| format!("{:.0}", r.ops_per_sec));
            let cpu = |r: Option<&TxMeasurement>| r.map_or("-".to_string(), |r| format!("{:.2}", r.cpu_us_per_op()));
            let extra = match (tx, get_put) {
                (Some(a), Some(b)) => format!("{:+.2}", a.cpu_us_per_op() - b.cpu_us_per_op()),
                _ => "-".into(),
            };
            println!(
                "{:<10} {:>7} {:>9} {:>11} {:>9} {:>12} {:>9} {:>14} {:>11} {:>13}",
                e.name(),
                t,
                ops(tx),
                ops(get_put),
                ops(put),
                cpu(tx),
                cpu(get_put),
                cpu(put),
                ratio(tx.map_or(0.0, |r| r.ops_per_sec), get_put.map_or(0.0, |r| r.ops_per_sec)),
                extra
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: Variant, table: &str, phase: &str, ops_per_sec: f64) -> TxMeasurement {
        TxMeasurement {
            table: table.into(),
            phase: phase.into(),
            engine,
            threads: 1,
            ops: 10,
            conflicts: 0,
            seconds: 1.0,
            cpu_seconds: 1.0,
            ops_per_sec,
            conflicts_per_op: 0.0,
            p50_us: 1.0,
            p99_us: 2.0,
        }
    }

    #[test]
    fn a_peer_is_compared_with_shambas_row_of_its_table_and_phase() {
        let rows = vec![
            row(Variant::Shamba, "transactions: a", "1 thread", 10.0),
            row(Variant::Shamba, "transactions: b", "1 thread", 20.0),
            row(Variant::Fjall, "transactions: b", "1 thread", 5.0),
        ];
        assert_eq!(shamba_row(&rows, &rows[2]).map(|r| r.ops_per_sec), Some(20.0));
        assert_eq!(ratio(20.0, 5.0), "4.00x");
        assert_eq!(ratio(0.0, 5.0), "-");
    }

    #[test]
    fn the_cost_table_finds_the_rows_by_table_and_phase() {
        let rows = vec![
            row(Variant::Fjall, "transactions: read-modify-write of 1 key, uniform over 9 keys", "1 thread", 3.0),
            row(Variant::Fjall, "plain writes, no transaction", "get + put, 1 thread", 6.0),
        ];
        let ops = |e, table, phase| row_of(&rows, e, table, phase).map(|r| r.ops_per_sec);
        assert_eq!(ops(Variant::Fjall, "transactions: read-modify-write of 1 key", "1 thread"), Some(3.0));
        assert_eq!(ops(Variant::Fjall, "plain writes", "get + put, 1 thread"), Some(6.0));
        assert_eq!(ops(Variant::Fjall, "plain writes", "put, 1 thread"), None);
        assert_eq!(ops(Variant::Shamba, "plain writes", "get + put, 1 thread"), None);
    }
}
