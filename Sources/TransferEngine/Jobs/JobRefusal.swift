/// Why a job, or a manifest of them, is not queued: the typed reason the core throws. Only the
/// control protocol turns it into its error codes (in Control/).
enum JobRefusal: Error, Equatable, Sendable {
    /// A value of the job is wrong: its URL, a path, a number, a header, a form part, resume data.
    case invalid(String)
    /// A download's destination may not be written: another job owns it, or it is inside the
    /// state directory.
    case destination(DestinationRefusal)
    /// The batch it names does not exist.
    case unknownBatch(Int64)
    /// More than the daemon takes at once (manifest entries, staged bytes).
    case tooLarge(String)
    /// One line (or file) of a manifest was refused for `reason`.
    indirect case at(place: String, reason: JobRefusal)

    /// One line a user can act on.
    var message: String {
        switch self {
        case .invalid(let message), .tooLarge(let message): message
        case .destination(let refusal): refusal.message
        case .unknownBatch(let id): "no batch \(id) (create one with 'transferctl batch create NAME')"
        case .at(let place, let reason): "\(place): \(reason.message)"
        }
    }
}
