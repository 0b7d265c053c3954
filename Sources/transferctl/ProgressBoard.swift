#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// What `watch` shows: one row per job, kept up to date from events, drawn in place on a
/// terminal (or as plain lines, at most one a second, elsewhere).
struct ProgressBoard {
    struct Row {
        var name: String
        var state: JobState
        var done: Int64
        var total: Int64?
        var rate: Int64 = 0
    }

    let interactive: Bool
    private var rows: [JobID: Row] = [:]
    private var order: [JobID] = []
    private var drawnLines = 0
    private var lastDraw = 0.0

    init(interactive: Bool) { self.interactive = interactive }

    func knows(_ id: JobID) -> Bool { rows[id] != nil }

    func hasEnded(_ id: JobID) -> Bool { rows[id]?.state.hasEnded ?? false }

    mutating func update(_ job: Job) {
        let name = (job.kind == .download ? job.path : job.path ?? job.url).map { String($0.split(separator: "/").last ?? "") } ?? job.url
        if rows[job.id] == nil { order.append(job.id) }
        // Escaped before it is fitted to its column: the board writes its own cursor controls, raw.
        rows[job.id] = Row(name: TerminalText.escape(name), state: job.state, done: job.bytesDone, total: job.bytesTotal)
    }

    mutating func apply(_ event: TransferEvent) {
        guard let id = event.job, var row = rows[id] else { return }
        if let state = event.state, event.type == .state { row.state = state }
        if event.type == .progress || event.type == .attemptStarted {
            row.done = event.bytesDone ?? row.done
            row.total = event.bytesTotal ?? row.total
        }
        if event.type == .progress { row.rate = event.rate ?? 0 }
        if event.type == .state, row.state != .running { row.rate = 0 }
        if event.type == .state, row.state == .completed, let total = row.total { row.done = total }
        rows[id] = row
    }

    /// Redraws at most 4 times a second on a terminal, once a second otherwise.
    mutating func draw(force: Bool = false) {
        let now = Monotonic.now
        guard force || now - lastDraw >= (interactive ? 0.25 : 1) else { return }
        lastDraw = now
        let width = max(40, Self.terminalWidth())
        var lines = order.compactMap { rows[$0].map { line($0, width: width) } }
        lines.append(totals(width: width))
        var output = ""
        if interactive {
            if drawnLines > 0 { output += "\u{1B}[\(drawnLines)A" }  // back to the first row
            output += lines.map { "\r\u{1B}[2K" + $0 }.joined(separator: "\n") + "\n"
            drawnLines = lines.count
        } else {
            output = lines.joined(separator: "\n") + "\n"
        }
        FileHandle.standardOutput.write(output)
    }

    mutating func finish() -> ExitStatus {
        draw(force: true)
        return .success
    }

    private func line(_ row: Row, width: Int) -> String {
        let percent = row.total.map { $0 > 0 ? Double(row.done) / Double($0) : 1 }
        let bytes = ByteCount.describe(row.done) + (row.total.map { " / " + ByteCount.describe($0) } ?? "")
        let eta = row.total.flatMap { total in row.rate > 0 ? Self.duration((Double(total) - Double(row.done)) / Double(row.rate)) : nil }
        let tail = [percent.map { String(format3: $0 * 100) + "%" } ?? "  ?", bytes, Rate.describe(row.rate),
                    eta.map { "ETA " + $0 } ?? "", row.state.rawValue].filter { !$0.isEmpty }.joined(separator: "  ")
        let nameWidth = min(24, max(8, width / 4))
        let barWidth = max(10, width - nameWidth - tail.count - 6)
        let filled = Int(saturating: (percent ?? 0) * Double(barWidth))
        let bar = "[" + String(repeating: "#", count: min(barWidth, filled)) +
            String(repeating: "-", count: max(0, barWidth - filled)) + "]"
        return String((Self.fit(row.name, nameWidth) + " " + bar + " " + tail).prefix(width))
    }

    private func totals(width: Int) -> String {
        let all = order.compactMap { rows[$0] }
        let done = all.reduce(Int64(0)) { $0.saturatingAdd($1.done) }
        let total = all.reduce(Int64(0)) { $0.saturatingAdd($1.total ?? $1.done) }
        let rate = all.reduce(Int64(0)) { $0.saturatingAdd($1.rate) }
        let running = all.filter { $0.state == .running }.count
        let ended = all.filter { $0.state.hasEnded }.count
        return String("total: \(all.count) jobs, \(running) running, \(ended) ended; \(ByteCount.describe(done)) of \(ByteCount.describe(total)) at \(Rate.describe(rate))".prefix(width))
    }

    private static func fit(_ text: String, _ width: Int) -> String {
        text.count > width ? String(text.prefix(width - 1)) + "…" : text.padding(to: width)
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(saturating: seconds.rounded())
        return total >= 3600 ? "\(total / 3600)h\(total % 3600 / 60)m" : total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }

    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}

extension String {
    /// `12.3` with one decimal, right-aligned to 5 characters.
    init(format3 value: Double) {
        let tenths = (value * 10).rounded() / 10
        self = String(tenths)
        if count < 5 { self = String(repeating: " ", count: 5 - count) + self }
    }
}
