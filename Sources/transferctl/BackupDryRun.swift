import FoundationEssentials
import TransferEngine

/// `backup --dry-run`: for every regular file the scan reached (and every directory a rule
/// excluded) one line saying what the backup would do with it and why, then a summary. What
/// the daemon would decide comes from `backup-plan`, which creates nothing. Thread: main.
struct BackupDryRun {
    /// One line of the report; `--json` prints each as an object.
    struct Line: Encodable, Equatable {
        /// Relative to DIR; an excluded directory ends in `/`.
        var path: String
        /// `send` or `skip`.
        var action: String
        var reason: String
    }

    private(set) var lines: [Line] = []
    private var sendCount = 0
    private var sendBytes: Int64 = 0
    /// Files skipped, by reason, in the order the reasons were first seen.
    private var skipped: [(reason: String, count: Int)] = []
    private var excludedFiles = 0
    private var excludedDirectories = 0

    /// `scanned` in walk order; `decisions` the daemon's, one per file that no rule excluded, in
    /// the same order.
    init(_ scanned: [DirectoryScan.Entry], decisions: [BackupDecision]) {
        var decisions = decisions.makeIterator()
        lines.reserveCapacity(scanned.count)
        for entry in scanned {
            if let rule = entry.excludedBy {
                lines.append(Line(path: entry.relativePath + (entry.isDirectory ? "/" : ""), action: "skip",
                                  reason: "excluded by \(rule)"))
                if entry.isDirectory { excludedDirectories += 1 } else { excludedFiles += 1 }
                continue
            }
            guard let decision = decisions.next() else { break }
            let reason = Self.reason(decision)
            lines.append(Line(path: entry.relativePath, action: decision.sends ? "send" : "skip", reason: reason))
            if decision.sends {
                sendCount += 1
                sendBytes = sendBytes.saturatingAdd(entry.size)
            } else if let index = skipped.firstIndex(where: { $0.reason == reason }) {
                skipped[index].count += 1
            } else {
                skipped.append((reason, 1))
            }
        }
    }

    /// Why, in the words of the report.
    static func reason(_ decision: BackupDecision) -> String {
        switch decision {
        case .new: "new"
        case .changedSize: "changed: size"
        case .changedTime: "changed: mtime"
        case .changedContents: "changed: contents"
        case .noChecksum: "changed: no checksum recorded"
        case .incomplete: "last upload did not complete"
        case .unchanged: "unchanged"
        case .queued: "already queued"
        case .gone: "deleted"
        }
    }

    /// `dry run: 3 to send (12.0 KiB), 2 unchanged, 4 excluded, 1 directory excluded; nothing was queued`
    var summary: String {
        var parts = ["\(sendCount) to send (\(ByteCount.describe(sendBytes)))"]
        parts += skipped.map { "\($0.count) \($0.reason)" }
        if excludedFiles > 0 { parts.append("\(excludedFiles) excluded") }
        if excludedDirectories > 0 {
            parts.append("\(excludedDirectories) \(excludedDirectories == 1 ? "directory" : "directories") excluded")
        }
        return "dry run: " + parts.joined(separator: ", ") + "; nothing was queued"
    }

    /// Prints the lines on stdout (`send photos/a.jpg (new)`, or with `json` one object a line)
    /// and the summary (on stderr with `json`, so that stdout holds only the objects).
    func print(json: Bool) {
        var output = OutputBuffer()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for line in lines {
                guard let data = try? encoder.encode(line) else { continue }
                output.append(String(decoding: data, as: UTF8.self))
            }
            output.flush()
            Context.note(summary)
        } else {
            for line in lines { output.append(TerminalText.escape("\(line.action) \(line.path) (\(line.reason))")) }
            output.append(TerminalText.escape(summary))
            output.flush()
        }
    }

    /// Lines for stdout, written 64 KiB at a time rather than one system call each.
    private struct OutputBuffer {
        private var text = ""

        mutating func append(_ line: String) {
            text += line
            text += "\n"
            if text.utf8.count >= 64 << 10 { flush() }
        }

        mutating func flush() {
            guard !text.isEmpty else { return }
            FileHandle.standardOutput.write(text)
            text = ""
        }
    }
}
