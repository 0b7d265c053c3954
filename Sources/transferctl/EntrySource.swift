import TransferEngine

/// A batch's entries, handed out a chunk at a time: read from a manifest as they are asked for
/// (so that the daemon reads one chunk while the next is parsed), or made already (a backup's
/// scan). Entries given back (`giveBack`, a chunk too long for one request) come out first.
struct EntrySource {
    private var manifest: ManifestReader?
    private var made: ArraySlice<ManifestEntry>

    init(manifest: ManifestReader) {
        self.manifest = manifest
        made = []
    }

    init(_ entries: [ManifestEntry]) {
        manifest = nil
        made = entries[...]
    }

    var isAtEnd: Bool { made.isEmpty && (manifest?.isAtEnd ?? true) }

    /// The next `count` entries, fewer only at the end.
    mutating func next(_ count: Int) throws(Manifest.LineError) -> [ManifestEntry] {
        var entries = Array(made.prefix(count))
        made = made.dropFirst(entries.count)
        if entries.count < count {
            entries += try manifest?.next(count - entries.count) ?? []
        }
        return entries
    }

    /// Entries taken but not sent: they come out first again.
    mutating func giveBack(_ entries: ArraySlice<ManifestEntry>) {
        made = entries + made
    }
}
