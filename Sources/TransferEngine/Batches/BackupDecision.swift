/// What a backup does with one of its files, and why: the decision queueing a backup makes
/// (`BatchQueueing`), and what `backup-plan` tells `backup --dry-run` it would make. Raw values
/// are the control protocol's words. Pure. Thread: any.
public enum BackupDecision: String, Codable, Equatable, Sendable, CaseIterable {
    /// Send: no version of it was ever queued from this directory to this prefix.
    case new
    /// Send: its size differs from the version last queued.
    case changedSize = "changed-size"
    /// Send: same size, another modification time.
    case changedTime = "changed-mtime"
    /// Send (`--checksum`): its sha256 differs from the version last queued.
    case changedContents = "changed-sha256"
    /// Send (`--checksum`): the version last queued was queued without a sha256.
    case noChecksum = "no-sha256"
    /// Send: this version was queued before, but its upload did not complete (it failed, was
    /// cancelled, or its job is gone).
    case incomplete
    /// Skip: this version was uploaded completely.
    case unchanged
    /// Skip: this version is queued in a job that has not ended.
    case queued
    /// Skip: the file was deleted since the directory was scanned.
    case gone

    /// Whether the file is uploaded.
    public var sends: Bool {
        switch self {
        case .new, .changedSize, .changedTime, .changedContents, .noChecksum, .incomplete: true
        case .unchanged, .queued, .gone: false
        }
    }

    /// The file as it is now (`source`, with its `sha256` when the backup compares contents)
    /// against the version last queued to the same place (`record`).
    static func decide(_ source: SourceFile, sha256: String?, checksum: Bool,
                       record: JobStore.BackupFileRecord?) -> BackupDecision {
        guard let record else { return .new }
        if checksum {
            guard let recorded = record.sha256 else { return .noChecksum }
            if recorded != sha256 { return .changedContents }
        } else {
            if record.size != source.size { return .changedSize }
            if record.modified != source.modified { return .changedTime }
        }
        if record.done { return .unchanged }
        return (record.jobState.map { !$0.hasEnded } ?? false) ? .queued : .incomplete
    }
}
