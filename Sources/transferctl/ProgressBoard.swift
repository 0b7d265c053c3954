#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// What `watch` shows: one row per job, kept up to date from events, and a totals line. On a
/// terminal the frame is redrawn in place, fitted to the terminal's width (`BoardLayout`) and
/// height (never taller than the screen, so no frame scrolls into the scrollback: the rows that
/// do not fit are summarized as "… and N more"); elsewhere it is printed as plain lines, at
/// most once a second, never cut. `wait --progress` draws the same jobs as one line
/// (`drawLine`): bar, percent, bytes, rate, ETA, jobs ended.
struct ProgressBoard {
    struct Row {
        var name: String
        var state: JobState
        var done: Int64
        var total: Int64?
        /// Bytes per second, smoothed.
        var rate: Int64 = 0
        var startedAt: Timestamp?
        var finishedAt: Timestamp?
    }

    let interactive: Bool
    /// Where it is drawn: stdout for `watch`, stderr for `wait --progress`.
    let output: FileHandle
    private(set) var rows: [JobID: Row] = [:]
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
        rows[job.id] = Row(name: TerminalText.escape(name), state: job.state, done: job.bytesDone, total: job.bytesTotal,
                           rate: job.rate ?? 0, startedAt: job.startedAt, finishedAt: job.finishedAt)
    }

    mutating func apply(_ event: TransferEvent) {
        guard let id = event.job, var row = rows[id] else { return }
        if let state = event.state, event.type == .state {
            row.state = state
            if state == .running, row.startedAt == nil { row.startedAt = event.time }
            if state.hasEnded { row.finishedAt = event.time }
        }
        if event.type == .progress || event.type == .attemptStarted || (event.type == .state && event.state?.hasEnded == true) {
            row.done = event.bytesDone ?? row.done
            row.total = event.bytesTotal ?? row.total
        }
        // Progress events measure 250 ms: smoothed, so the rate and ETA do not flicker.
        if event.type == .progress, let rate = event.rate { row.rate = row.rate == 0 ? rate : (row.rate * 4 + rate) / 5 }
        if event.type == .state, row.state != .running { row.rate = 0 }
        if event.type == .state, row.state == .completed, let total = row.total { row.done = total }
        rows[id] = row
    }

    /// Redraws at most 4 times a second on a terminal, once a second otherwise.
    mutating func draw(force: Bool = false) {
        let now = Monotonic.now
        guard force || now - lastDraw >= (interactive ? 0.25 : 1) else { return }
        lastDraw = now
        let size = interactive ? terminalSize() : nil
        let lines = frame(width: size?.width, height: size?.height, now: .now)
        var output = ""
        if interactive {
            if drawnLines > 0 { output += "\r\u{1B}[\(drawnLines)A" }  // back to the first row
            output += lines.map { "\r\u{1B}[2K" + $0 }.joined(separator: "\n") + "\n"
            output += "\u{1B}[J"  // what a taller frame before left below
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
        output.write("\r" + summary(width: max(40, terminalSize().width) - 1) + "\u{1B}[K")
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

    /// The lines of one frame: at most `height - 1` (the cursor's line below it never scrolls
    /// the screen), each at most `width` wide.
    func frame(width: Int?, height: Int?, now: Timestamp) -> [String] {
        let layout = BoardLayout.fitting(width: width)
        var shown = order
        var hidden: [JobID] = []
        if let height, order.count + 1 > height - 1 {
            let capacity = max(1, height - 3)  // rows, "… and N more", totals
            // By rank, then by place on the board (a sort that keeps ties in order).
            let ranked = order.enumerated().map { (rank: Self.rank($0.element, rows), place: $0.offset, id: $0.element) }
                .sorted { ($0.rank, $0.place) < ($1.rank, $1.place) }
            let kept = Set(ranked.prefix(capacity).map(\.id))
            shown = order.filter(kept.contains)
            hidden = order.filter { !kept.contains($0) }
        }
        var lines = shown.compactMap { rows[$0].map { line($0, layout) } }
        if !hidden.isEmpty { lines.append(more(hidden)) }
        lines.append(totals())
        guard let width else { return lines }
        return lines.map { $0.count > width ? String($0.prefix(width)) : $0 }
    }

    /// Which rows a short screen keeps first: those moving, then those about to, then the
    /// rest, the ended last.
    private static func rank(_ id: JobID, _ rows: [JobID: Row]) -> Int {
        switch rows[id]?.state {
        case .running: 0
        case .waiting: 1
        case .queued: 2
        case .paused: 3
        default: 4
        }
    }

    private func line(_ row: Row, _ layout: BoardLayout) -> String {
        let percent = row.total.map { $0 > 0 ? Double(row.done) / Double($0) : 1 } ?? (row.state == .completed ? 1 : nil)
        var columns: [String] = []
        columns.append(layout.nameWidth.map { Self.fit(row.name, $0) } ?? row.name)
        if layout.barWidth > 0 { columns.append(Self.bar(percent ?? 0, width: layout.barWidth - 2)) }
        columns.append(Self.right(percent.map { String(format3: $0 * 100) + "%" } ?? "?", BoardLayout.percentWidth))
        if layout.showsBytes {
            let bytes = ByteCount.describe(row.done) + (row.total.map { " / " + ByteCount.describe($0) } ?? "")
            columns.append(Self.right(bytes, BoardLayout.bytesWidth))
        }
        columns.append(Self.right(rateText(row), BoardLayout.rateWidth))
        columns.append(timeText(row).padding(to: BoardLayout.timeWidth))
        if layout.showsState { columns.append(row.state.rawValue.padding(to: BoardLayout.stateWidth)) }
        var text = columns.joined(separator: "  ")
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    /// The rate while it runs; once completed, the average from its start to its end.
    private func rateText(_ row: Row) -> String {
        if row.state == .running { return Rate.describe(row.rate) }
        guard row.state == .completed, let seconds = elapsed(row), seconds > 0 else { return "" }
        return Rate.describe(Int64(saturating: (Double(row.done) / seconds).rounded()))
    }

    /// `ETA …` while it runs with a known size; `took …` once completed.
    private func timeText(_ row: Row) -> String {
        if row.state == .running, let total = row.total, row.rate > 0 {
            return "ETA " + Self.duration(Double(max(0, total - row.done)) / Double(row.rate))
        }
        if row.state == .completed, let seconds = elapsed(row) { return "took " + Self.duration(seconds) }
        return ""
    }

    private func elapsed(_ row: Row) -> Double? {
        guard let start = row.startedAt, let end = row.finishedAt, end >= start else { return nil }
        return Double(end.rawValue - start.rawValue) / 1000
    }

    private func more(_ hidden: [JobID]) -> String {
        var counts: [JobState: Int] = [:]
        for id in hidden { if let state = rows[id]?.state { counts[state, default: 0] += 1 } }
        return "… and \(hidden.count) more: " + JobState.describe(counts)
    }

    /// Every job but the cancelled ones; a job whose size is unknown counts with what it has
    /// received, and is said to be unknown.
    private func totals() -> String {
        let counted = order.compactMap { rows[$0] }.filter { $0.state != .cancelled }
        let done = counted.reduce(Int64(0)) { $0.saturatingAdd($1.done) }
        let total = counted.reduce(Int64(0)) { $0.saturatingAdd($1.total ?? 0) }
        let unknown = counted.filter { $0.total == nil }.count
        let rate = counted.filter { $0.state == .running }.reduce(Int64(0)) { $0.saturatingAdd($1.rate) }
        let running = counted.filter { $0.state == .running }.count
        let ended = counted.filter { $0.state.hasEnded }.count
        var text = "total: \(Self.count(counted.count, "job")), \(running) running, \(ended) ended; \(ByteCount.describe(done))"
        if counted.count > unknown { text += " of \(ByteCount.describe(total))" + (unknown > 0 ? " and more" : "") }
        if unknown > 0 { text += " (\(Self.count(unknown, "job")) of unknown size)" }
        return text + " at \(Rate.describe(rate))"
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    private static func fit(_ text: String, _ width: Int) -> String {
        text.count > width ? String(text.prefix(width - 1)) + "…" : text.padding(to: width)
    }

    private static func right(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(saturating: seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h" + String(format2: total % 3600 / 60) + "m" }
        if total >= 60 { return "\(total / 60)m" + String(format2: total % 60) + "s" }
        return "\(total)s"
    }

    func terminalSize() -> (width: Int, height: Int) {
        var size = winsize()
        guard ioctl(output.descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}

extension String {
    /// `12.3` with one decimal, right-aligned to 5 characters.
    init(format3 value: Double) {
        let tenths = (value * 10).rounded() / 10
        self = String(tenths)
        if count < 5 { self = String(repeating: " ", count: 5 - count) + self }
    }

    /// Two digits: `05`.
    init(format2 value: Int) {
        self = value < 10 ? "0\(value)" : "\(value)"
    }
}
