/// The chunks of manifests not yet queued, by connection and token, with what has been checked
/// of their lines so far (`ManifestChecks`): until their final chunk, and then until the checks
/// of all their chunks are back (`close`), so that the queueing finds every line checked and
/// its row made. They are bounded in entries and in request bytes, per connection and all
/// together, so chunks that never end cannot fill memory; a connection's chunks go when it
/// closes. A value kept by the scheduler. Pure; unit-tested.
struct ManifestStaging {
    /// Entries in one manifest, and in all the manifests waiting for their final chunk.
    static let maxEntries = 250_000
    /// Request bytes of the chunks one connection has waiting...
    static let maxBytesPerConnection = 96 << 20
    /// ...and all connections together.
    static let maxBytes = 128 << 20

    /// Entries and request bytes held, in all the manifests, up to which the checks of a chunk
    /// also make its lines' rows (`PreparedJob`), each about as large again as its entry: the
    /// rows of a manifest of thousands of lines are made while it comes, and the memory they
    /// take stays bounded however many entries are held (the queueing makes the others).
    static let maxPreparedEntries = 20_000
    static let maxPreparedBytes = 16 << 20

    /// Whether the checks of a chunk just held make its rows.
    var preparesRows: Bool { entries <= Self.maxPreparedEntries && bytes <= Self.maxPreparedBytes }

    private struct Key: Hashable {
        var connection: Int
        var token: String
    }

    private struct Manifest {
        var entries: [ManifestEntry] = []
        var bytes = 0
        var checks = ManifestChecks()
        /// Its final chunk came: it waits for its checks, and takes no more chunks.
        var closing = false
    }

    private var staged: [Key: Manifest] = [:]
    private(set) var entries = 0
    private(set) var bytes = 0

    /// What a chunk led to: held, with this many entries of the manifest so far.
    enum Outcome: Equatable {
        case staged(Int)
        /// The final chunk: held until its checks are back (`close`).
        case closing(Int)
    }

    /// Adds a chunk that came in `bytes` of request. A chunk past a bound is refused with
    /// `too_large`, and the manifest's earlier chunks are dropped with it (it cannot be queued
    /// whole any more).
    mutating func add(_ chunk: [ManifestEntry], bytes chunkBytes: Int, connection: Int, token: String,
                      final: Bool) throws(JobRefusal) -> Outcome {
        let key = Key(connection: connection, token: token)
        if staged[key]?.closing == true { throw JobRefusal.invalid("the manifest's final chunk came already") }
        var manifest = remove(key) ?? Manifest()
        manifest.entries += chunk
        manifest.bytes += chunkBytes
        let connectionBytes = staged.reduce(manifest.bytes) { $0 + ($1.key.connection == connection ? $1.value.bytes : 0) }
        if manifest.entries.count > Self.maxEntries {
            throw JobRefusal.tooLarge("a manifest may hold at most \(Self.maxEntries) jobs")
        }
        if connectionBytes > Self.maxBytesPerConnection {
            throw JobRefusal.tooLarge("the manifests of one connection may take at most "
                + "\(Self.maxBytesPerConnection >> 20) MiB of requests until their last chunk; split the manifest")
        }
        if manifest.entries.count + entries > Self.maxEntries || manifest.bytes + bytes > Self.maxBytes {
            throw JobRefusal.tooLarge("too many manifest entries are waiting for their last chunk; try again later")
        }
        manifest.closing = final
        staged[key] = manifest
        entries += manifest.entries.count
        bytes += manifest.bytes
        return final ? .closing(manifest.entries.count) : .staged(manifest.entries.count)
    }

    /// The whole manifest whose final chunk came, no longer held, and what was checked of it;
    /// nil when it is not held (its client went away).
    mutating func close(connection: Int, token: String) -> ([ManifestEntry], ManifestChecks)? {
        let key = Key(connection: connection, token: token)
        guard staged[key]?.closing == true, let manifest = remove(key) else { return nil }
        return (manifest.entries, manifest.checks)
    }

    /// Keeps what was checked of a manifest still held (the checks of one that is gone, queued
    /// or dropped, are forgotten).
    mutating func checked(_ checks: ManifestChecks, connection: Int, token: String) {
        staged[Key(connection: connection, token: token)]?.checks.append(checks)
    }

    /// The client went away in the middle of its manifests: forgets their chunks. Returns the
    /// tokens of the manifests forgotten.
    @discardableResult
    mutating func drop(connection: Int) -> [String] {
        let keys = staged.keys.filter { $0.connection == connection }
        for key in keys { _ = remove(key) }
        return keys.map(\.token)
    }

    private mutating func remove(_ key: Key) -> Manifest? {
        guard let manifest = staged.removeValue(forKey: key) else { return nil }
        entries -= manifest.entries.count
        bytes -= manifest.bytes
        return manifest
    }
}
