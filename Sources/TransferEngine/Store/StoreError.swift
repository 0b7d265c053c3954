/// Why the store could not do what was asked.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case databaseFromFuture(version: Int, supported: Int)
    case unknownJob(JobID)
    case cannotOpen(path: String, reason: String)

    public var description: String {
        switch self {
        case .databaseFromFuture(let version, let supported):
            "the database has schema version \(version) but this transferd knows only up to \(supported): upgrade transferd"
        case .unknownJob(let id): "no job \(id)"
        case .cannotOpen(let path, let reason): "cannot open the database \(path): \(reason)"
        }
    }
}
