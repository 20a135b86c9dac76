//! Reading a CSV file retrysim wrote back in: its header checked against the file's table of
//! columns and every cell against its column's type, so a file edited by hand or cut short is
//! refused with its line and column rather than drawn wrong.

use std::path::Path;

use super::column::{Column, Kind};
use crate::error::Error;

/// A CSV file read back: its header and its rows, every cell of its column's type.
#[derive(Clone, Debug)]
pub struct CsvTable {
    columns: Vec<String>,
    /// Each row with the file line it was read from.
    rows: Vec<(u64, Vec<String>)>,
}

impl CsvTable {
    /// Reads `path`, which must have one column per swept key (named by its path) and then
    /// `expected`.
    pub fn read(path: &Path, axes: &[String], expected: &[Column]) -> Result<CsvTable, Error> {
        let mut rows = Vec::new();
        let columns = CsvTable::each(path, axes, expected, |line, cells| {
            rows.push((line, cells.iter().map(String::from).collect()));
        })?;
        Ok(CsvTable { columns, rows })
    }

    /// Checks `path` as [`CsvTable::read`] does, handing each row to `row` with its file line
    /// as it is read, and keeping none: a reader that needs a few columns of a large file holds
    /// only those. Returns the header.
    pub fn each(
        path: &Path,
        axes: &[String],
        expected: &[Column],
        mut row: impl FnMut(u64, &csv::StringRecord),
    ) -> Result<Vec<String>, Error> {
        let bad = |why: String| Error::BadOutput(format!("{}: {why}", path.display()));
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .map_err(|e| bad(format!("cannot read: {e}")))?;
        let columns: Vec<String> = reader
            .headers()
            .map_err(|e| bad(e.to_string()))?
            .iter()
            .map(String::from)
            .collect();
        let kinds = expect_columns(&columns, axes, expected).map_err(bad)?;
        let mut record = csv::StringRecord::new();
        while reader
            .read_record(&mut record)
            .map_err(|e| bad(e.to_string()))?
        {
            let line = record.position().map_or(0, |p| p.line());
            check_cells(&record, &columns, &kinds, line).map_err(bad)?;
            row(line, &record);
        }
        Ok(columns)
    }

    /// The header, as read.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The rows, each with its file line.
    pub fn rows(&self) -> impl Iterator<Item = (u64, &[String])> {
        self.rows
            .iter()
            .map(|(line, cells)| (*line, cells.as_slice()))
    }

    /// The position of column `name`; every caller asks for a column of the file's own table.
    pub fn at(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("`{name}` is a column of this file"))
    }
}

/// The type of each column, if `columns` is a header retrysim writes: one per axis, named by
/// its path, then `expected`; else why not.
fn expect_columns(
    columns: &[String],
    axes: &[String],
    expected: &[Column],
) -> Result<Vec<Kind>, String> {
    let names = axes
        .iter()
        .map(String::as_str)
        .chain(expected.iter().map(|c| c.name));
    let kinds = axes
        .iter()
        .map(|_| Kind::Label)
        .chain(expected.iter().map(|c| c.kind));
    if columns.len() != axes.len() + expected.len() {
        return Err(format!(
            "{} columns, but retrysim writes {} here ({} parameter columns and {})",
            columns.len(),
            axes.len() + expected.len(),
            axes.len(),
            expected.len()
        ));
    }
    for (i, (found, want)) in columns.iter().zip(names).enumerate() {
        if found != want {
            return Err(format!("column {} is `{found}`, expected `{want}`", i + 1));
        }
    }
    Ok(kinds.collect())
}

/// Whether every cell of the row on file line `line` has its column's type.
fn check_cells(
    cells: &csv::StringRecord,
    columns: &[String],
    kinds: &[Kind],
    line: u64,
) -> Result<(), String> {
    if cells.len() != columns.len() {
        return Err(format!(
            "line {line}: {} cells, expected {}",
            cells.len(),
            columns.len()
        ));
    }
    for ((cell, column), kind) in cells.iter().zip(columns).zip(kinds) {
        if !kind.accepts(cell) {
            return Err(format!(
                "line {line}, column `{column}`: `{cell}` is not a {} value",
                kind.name()
            ));
        }
    }
    Ok(())
}
