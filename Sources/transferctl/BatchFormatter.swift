import TransferEngine

/// Human output for batches: a table for `batch list`, a block for `batch show`.
enum BatchFormatter {
    static func progress(_ batch: Batch) -> String {
        let ended = (batch.jobs["completed"] ?? 0) + (batch.jobs["failed"] ?? 0) + (batch.jobs["cancelled"] ?? 0)
        return "\(ended)/\(batch.jobCount) jobs"
    }

    static func bytes(_ batch: Batch) -> String {
        ByteCount.describe(batch.bytesDone) + (batch.bytesTotal.map { " of " + ByteCount.describe($0) } ?? "")
    }

    static func table(_ batches: [Batch]) -> [String] {
        guard !batches.isEmpty else { return ["no batches"] }
        let header = ["ID", "STATE", "ENDED", "BYTES", "RATE", "NAME"]
        let rows = batches.map { batch in
            [String(batch.id), batch.state.rawValue, progress(batch), bytes(batch),
             batch.rate > 0 ? Rate.describe(batch.rate) : "-", batch.name]
        }
        return TextTable.render(header, rows)
    }

    static func detail(_ batch: Batch, hookRuns: [HookRun]) -> [String] {
        var lines = ["batch \(batch.id) (\(batch.name))"]
        func field(_ name: String, _ value: String?) {
            guard let value else { return }
            lines.append("  " + (name + ":").padding(to: 13) + value)
        }
        field("state", batch.state.rawValue)
        let states = JobState.allCases.compactMap { state in
            (batch.jobs[state.rawValue] ?? 0) > 0 ? "\(batch.jobs[state.rawValue] ?? 0) \(state.rawValue)" : nil
        }
        field("jobs", "\(batch.jobCount)" + (states.isEmpty ? "" : " (" + states.joined(separator: ", ") + ")"))
        field("bytes", bytes(batch))
        field("rate", batch.rate > 0 ? Rate.describe(batch.rate) : nil)
        field("eta", batch.etaSeconds.map { "\($0) s" })
        field("backup", batch.backup.map { "\($0.directory) -> \(Redaction.url($0.prefix))" })
        field("created", batch.createdAt.iso8601)
        field("on-complete", batch.onComplete)
        field("on-fail", batch.onFail)
        for run in hookRuns {
            field("hook", "on-\(run.event) at \(run.startedAt.iso8601): \(run.result.summary)")
        }
        return lines
    }
}
