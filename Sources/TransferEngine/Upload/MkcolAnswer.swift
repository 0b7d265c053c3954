/// What the status of a MKCOL says about the collection. Pure. Thread: any.
public enum MkcolAnswer: Equatable, Sendable {
    /// 2xx: the collection is there now. rclone answers 201 for one that already existed too.
    case created
    /// The collection already exists (RFC 4918: 405), or the server does not implement MKCOL
    /// (501) and so has no collections to make: either way the PUT may go ahead, and if a file
    /// stands where the collection should be, the PUT's own status says so.
    case exists
    /// Anything else (409 for a missing parent, 403, 401, 507, 5xx, a redirect): the files
    /// below it fail with this status.
    case failed

    public init(status: Int) {
        switch status {
        case 200..<300: self = .created
        case 405, 501: self = .exists
        default: self = .failed
        }
    }
}
