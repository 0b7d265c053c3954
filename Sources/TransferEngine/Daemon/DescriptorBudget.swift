/// How the daemon shares its file descriptors: a reserve for the database, the loop, hooks,
/// every transfer slot and the downloads finishing beside them, and half of the rest for
/// control connections, so that clients holding connections open can never leave a transfer or
/// the store without one. The downloads finishing beside the transfers get up to half of what
/// the database and the transfers leave, between one and `Admission.jobsPerSlot - 1` per slot.
/// Pure; unit-tested.
public struct DescriptorBudget: Equatable, Sendable {
    /// The database and its journal, the state lock, the loop's own descriptors, hook pipes.
    public static let base = 64
    /// One transfer: its socket (two while connecting to a host with two addresses), the partial
    /// file and its lock, a source file, its directory while finishing.
    public static let perTransfer = 8
    /// One finishing download beyond the transfer slots: its partial file and its lock, its
    /// directory.
    public static let perFinishing = 3
    public static let minConnections = 8
    public static let maxConnections = 256

    /// The soft RLIMIT_NOFILE the daemon runs with.
    public let limit: Int
    /// Downloads being made durable beside the transfers (`Admission.maxFinishing`).
    public let finishing: Int
    /// Kept for everything but control connections.
    public let reserve: Int
    /// Control connections served at once.
    public let connections: Int

    public init(limit: Int, maxActive: Int) {
        self.limit = limit
        let slots = max(maxActive, 1)
        let transfers = Self.base + Self.perTransfer * slots
        let affordable = max(limit - transfers, 0) / 2 / Self.perFinishing
        finishing = min(max(affordable, slots), Admission.finishing(forSlots: slots))
        reserve = transfers + Self.perFinishing * finishing
        connections = min(Self.maxConnections, max(Self.minConnections, (limit - reserve) / 2))
    }
}
