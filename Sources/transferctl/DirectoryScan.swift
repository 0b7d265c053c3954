#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// The regular files under a directory, for `backup`: relative paths in sorted order, each
/// name read as bytes and carried as a `RawPath` (a name that is not UTF-8 is kept exactly).
/// Symlinks are skipped unless followed; a directory reached twice (a link loop) is walked once.
/// Each file and directory is tested against the filter rules as the walk reaches it: an
/// excluded file is listed as such, an excluded directory is listed and not walked (nothing
/// below it is read, so one that cannot be read does no harm).
struct DirectoryScan {
    /// A regular file, or a directory a rule excluded.
    struct Entry {
        var relativePath: String
        var isDirectory: Bool
        /// A file's size in bytes (0 for a directory).
        var size: Int64
        /// The rule that excluded it; nil when it is backed up.
        var excludedBy: FilterRule?
        /// With `--follow-symlinks`, the file a symlink of the tree points to (its real path):
        /// what is sent, since the daemon never follows a link at a backup's path itself.
        var target: String? = nil
    }

    var followSymlinks: Bool
    var filters: FilterRules
    private var visited: Set<[UInt64]> = []

    init(followSymlinks: Bool, filters: FilterRules = FilterRules()) {
        self.followSymlinks = followSymlinks
        self.filters = filters
    }

    mutating func entries(under root: String) throws -> [Entry] {
        var info = stat()
        guard RawPath.withCString(root, { stat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw UsageError("\(root) is not a directory")
        }
        var result: [Entry] = []
        try walk(root, relative: "", into: &result)
        return result
    }

    private mutating func walk(_ directory: String, relative: String, into result: inout [Entry]) throws {
        var info = stat()
        guard RawPath.withCString(directory, { stat($0, &info) }) == 0,
              visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else { return }
        guard let handle = RawPath.withCString(directory, { opendir($0) }) else {
            throw UsageError("cannot read \(directory): \(SystemError.describe(errno))")
        }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { RawPath.string(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != ".", name != ".." { names.append(name) }
        }
        closedir(handle)
        for name in names.sorted() {
            let path = directory + "/" + name
            let relativePath = relative.isEmpty ? name : relative + "/" + name
            var entry = stat()
            guard RawPath.withCString(path, { lstat($0, &entry) }) == 0 else { continue }  // removed meanwhile
            let isLink = (entry.st_mode & S_IFMT) == S_IFLNK
            if isLink {
                guard followSymlinks, RawPath.withCString(path, { stat($0, &entry) }) == 0 else { continue }
            }
            switch entry.st_mode & S_IFMT {
            case S_IFREG:
                var file = Entry(relativePath: relativePath, isDirectory: false, size: Int64(entry.st_size),
                                 excludedBy: filters.exclusion(of: relativePath, isDirectory: false))
                if isLink {
                    guard let resolved = RawPath.withCString(path, { realpath($0, nil) }) else { continue }
                    file.target = RawPath.string(cString: resolved)
                    free(resolved)
                }
                result.append(file)
            case S_IFDIR:
                if let rule = filters.exclusion(of: relativePath, isDirectory: true) {
                    result.append(Entry(relativePath: relativePath, isDirectory: true, size: 0, excludedBy: rule))
                } else {
                    try walk(path, relative: relativePath, into: &result)
                }
            default: continue  // sockets, fifos, devices
            }
        }
    }

    /// The sha256 of a file, read in 1 MiB chunks.
    static func sha256(of path: String) throws -> String {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw UsageError("cannot read \(path): \(SystemError.describe(errno))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw UsageError("cannot read \(path): \(SystemError.describe(errno))") }
        switch SHA256.hexDigest(ofDescriptor: fd, length: Int64(info.st_size)) {
        case .success(let digest): return digest
        case .failure(let error): throw UsageError("cannot read \(path): \(error.message)")
        }
    }
}
