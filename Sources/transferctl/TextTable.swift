import TransferEngine

/// Columns padded to their widest cell; the last column is not padded. Cells are measured as
/// they are shown: escaped (`TerminalText`), so a name with a line break stays on its row.
enum TextTable {
    static func render(_ header: [String], _ rows: [[String]]) -> [String] {
        let rows = rows.map { $0.map(TerminalText.escape) }
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell.padding(to: widths[column])
            }.joined(separator: "  ")
        }
        return [line(header)] + rows.map(line)
    }
}
