import Foundation

/// nginx's `/dav/` location: what arrived there, and the PUT requests that brought it.
extension NginxServer {
    /// `http://127.0.0.1:PORT/dav/<encodedPath>` (the caller percent-encodes).
    func davURL(_ encodedPath: String = "") -> String { "\(baseURL)/dav/\(encodedPath)" }

    /// Every regular file under `davRoot`, by path relative to it (not encoded).
    func davFiles() -> [String: URL] {
        let fm = FileManager.default
        var files: [String: URL] = [:]
        let rootPath = davRoot.path + "/"
        guard let walker = fm.enumerator(atPath: davRoot.path) else { return [:] }
        while let relative = walker.nextObject() as? String {
            let url = URL(fileURLWithPath: rootPath + relative)
            if Files.isRegularFile(url) { files[relative] = url }
        }
        return files
    }

    /// PUT requests under `/dav/`, in log order, with the path relative to `/dav/`
    /// percent-decoded. Counts every status (an upload cut off by a crash is logged too).
    func davPuts() -> [(path: String, status: Int)] {
        accessLogEntries().compactMap { entry in
            guard entry.method == "PUT", entry.path.hasPrefix("/dav/") else { return nil }
            let encoded = String(entry.path.dropFirst("/dav/".count))
            return (path: encoded.removingPercentEncoding ?? encoded, status: entry.status)
        }
    }

    /// PUT requests per decoded path relative to `/dav/`.
    func davPutCounts() -> [String: Int] {
        davPuts().reduce(into: [:]) { $0[$1.path, default: 0] += 1 }
    }

    /// Encoded request paths (relative to `/dav/`) of the PUTs, as sent.
    func davPutRawPaths() -> [String] {
        accessLogEntries().compactMap { entry in
            guard entry.method == "PUT", entry.path.hasPrefix("/dav/") else { return nil }
            return String(entry.path.dropFirst("/dav/".count))
        }
    }
}
