#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// What `watch` shows: one row per job, kept up to date from events, drawn in place on a
/// terminal (or as plain lines, at most one a second, elsewhere). `wait --progress` draws the
/// same jobs as one line (`drawLine`): bar, percent, bytes, rate, ETA, jobs ended.
struct ProgressBoard {
    struct Row {
        var name: String
        var state: JobState
        var done: Int64
        var total: Int64?
        var rate: Int64 = 0
    }

    let interactive: Bool
    /// Where it is drawn: stdout for `watch`, stderr for `wait --progress`.
    let output: FileHandle
    private var rows: [JobID: Row] = [:]
    private var order: [JobID] = []
    private var drawnLines = 0
    private var lastDraw = 0.0
    /// `drawLine` has drawn, and the line is not ended yet.
    private var lineOpen = false

    init(interactive: Bool, output: FileHandle = .standardOutput) {
        self.interactive = interactive
        self.output = output
    }

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
        let width = max(40, terminalWidth())
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
        self.output.write(output)
    }

    mutating func finish() -> ExitStatus {
        draw(force: true)
        return .success
    }

    /// Redraws the one line of all the jobs in place (`\r`), at most 4 times a second: for a
    /// terminal only, as the caller knows.
    mutating func drawLine(force: Bool = false) {
        let now = Monotonic.now
        guard force || now - lastDraw >= 0.25 else { return }
        lastDraw = now
        lineOpen = true
        // One column short of the width: a terminal that wraps at the last column would start
        // a new line, and `\r` would then redraw only that one.
        output.write("\r" + summary(width: max(40, terminalWidth()) - 1) + "\u{1B}[K")
    }

    /// Ends the line `drawLine` drew, so that what follows starts on a fresh line.
    mutating func endLine() {
        guard lineOpen else { return }
        lineOpen = false
        output.write("\n")
    }

    /// `[#####-----]  42.0%  12.0 MiB / 30.0 MiB  4.0 MiB/s  ETA 5s  1 of 3 ended`: the bytes
    /// of all the jobs; percent and ETA only while every total is known.
    func summary(width: Int) -> String {
        let all = order.compactMap { rows[$0] }
        let done = all.reduce(Int64(0)) { $0.saturatingAdd($1.done) }
        let totalsKnown = all.allSatisfy { $0.total != nil || $0.state.hasEnded }
        let total = all.reduce(Int64(0)) { $0.saturatingAdd($1.total ?? $1.done) }
        let rate = all.reduce(Int64(0)) { $0.saturatingAdd($1.rate) }
        let ended = all.filter { $0.state.hasEnded }.count
        let fraction = totalsKnown ? (total > 0 ? min(1, Double(done) / Double(total)) : (ended == all.count ? 1 : 0)) : nil
        let eta = totalsKnown && rate > 0 && total > done ? "ETA " + Self.duration(Double(total - done) / Double(rate)) : ""
        let bytes = ByteCount.describe(done) + (totalsKnown ? " / " + ByteCount.describe(total) : "")
        let tail = [fraction.map { String(format3: $0 * 100) + "%" } ?? "  ?", bytes, Rate.describe(rate), eta,
                    "\(ended) of \(all.count) ended"].filter { !$0.isEmpty }.joined(separator: "  ")
        let bar = Self.bar(fraction ?? 0, width: max(10, min(40, width - tail.count - 4)))
        return String((bar + "  " + tail).prefix(width))
    }

    /// `[####------]`, `width` characters between the brackets.
    static func bar(_ fraction: Double, width: Int) -> String {
        let filled = min(width, max(0, Int(saturating: fraction * Double(width))))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }

    private func line(_ row: Row, width: Int) -> String {
        let percent = row.total.map { $0 > 0 ? Double(row.done) / Double($0) : 1 }
        let bytes = ByteCount.describe(row.done) + (row.total.map { " / " + ByteCount.describe($0) } ?? "")
        let eta = row.total.flatMap { total in row.rate > 0 ? Self.duration((Double(total) - Double(row.done)) / Double(row.rate)) : nil }
        let tail = [percent.map { String(format3: $0 * 100) + "%" } ?? "  ?", bytes, Rate.describe(row.rate),
                    eta.map { "ETA " + $0 } ?? "", row.state.rawValue].filter { !$0.isEmpty }.joined(separator: "  ")
        let nameWidth = min(24, max(8, width / 4))
        let barWidth = max(10, width - nameWidth - tail.count - 6)
        let bar = Self.bar(percent ?? 0, width: barWidth)
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

    func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(output.descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
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
