import Foundation

/// A batch as printed by `transferctl batch show --json` / `batch list --json`.
typealias BatchJSON = [String: Any]

extension Dictionary where Key == String, Value == Any {
    /// `jobs`: job count by state (every state present).
    var jobCounts: [String: Int] {
        (self["jobs"] as? [String: Any] ?? [:]).reduce(into: [:]) { $0[$1.key] = jsonInt($1.value) ?? 0 }
    }
    var jobCount: Int? { jsonInt(self["jobCount"]) }
    /// `show --json` / `batch show --json`: `{event, command, startedAt, result}`.
    var hookRuns: [[String: Any]] { self["hookRuns"] as? [[String: Any]] ?? [] }
    var stateReason: String? { self["stateReason"] as? String }
}

/// One `{"key": K, "download"|"upload": {...}}` manifest line.
func manifestLine(key: String?, download: [String: Any]) -> String { manifestLine(key: key, "download", download) }
func manifestLine(key: String?, upload: [String: Any]) -> String { manifestLine(key: key, "upload", upload) }

private func manifestLine(key: String?, _ kind: String, _ fields: [String: Any]) -> String {
    var object: [String: Any] = [kind: fields]
    if let key { object["key"] = key }
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
}

extension CLI {
    /// Writes `lines` (JSON Lines) to `url` and returns it.
    @discardableResult
    func writeManifest(_ lines: [String], to url: URL) throws -> URL {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
        return url
    }

    /// `batch submit FILE OPTIONS... --json`, parsed; throws unless exit 0.
    func submit(_ manifest: URL, _ options: [String] = []) throws -> [String: Any] {
        guard let result = try json(["batch", "submit", manifest.path] + options, timeout: 60) as? [String: Any] else {
            throw HarnessError("batch submit --json did not print an object")
        }
        return result
    }

    /// `batch create NAME OPTIONS...`: the new batch id (printed alone on stdout).
    func createBatch(_ name: String, _ options: [String] = []) throws -> Int {
        let result = run(["batch", "create", name] + options)
        guard result.exitCode == 0, let id = Int(result.trimmedStdout) else {
            throw HarnessError("batch create did not print a batch id: \(result.summary)")
        }
        return id
    }

    /// `batch show B --json`
    func batch(_ id: Int) throws -> BatchJSON {
        guard let batch = try json(["batch", "show", String(id)]) as? BatchJSON else {
            throw HarnessError("batch show \(id) --json did not print an object")
        }
        return batch
    }

    /// `batch list --json`
    func batches() throws -> [BatchJSON] {
        guard let batches = try json(["batch", "list"]) as? [BatchJSON] else {
            throw HarnessError("batch list --json did not print an array")
        }
        return batches
    }

    /// `list --batch B --json` (with `--limit` high enough for every test here).
    func jobs(batch: Int, limit: Int = 5000) throws -> [JobJSON] {
        guard let jobs = try json(["list", "--batch", String(batch), "--limit", String(limit)]) as? [JobJSON] else {
            throw HarnessError("list --batch --json did not print an array")
        }
        return jobs
    }

    /// `backup DIR --to PREFIX OPTIONS... --json`, parsed; throws unless exit 0.
    func backup(_ directory: URL, to prefix: String, _ options: [String] = []) throws -> [String: Any] {
        guard let result = try json(["backup", directory.path, "--to", prefix] + options, timeout: 60) as? [String: Any] else {
            throw HarnessError("backup --json did not print an object")
        }
        return result
    }

    /// Polls `batch show B --json` until `predicate` holds; throws with the last batch on timeout.
    @discardableResult
    func awaitBatch(_ id: Int, _ what: String, timeout: TimeInterval = 20, interval: TimeInterval = 0.05,
                    until predicate: (BatchJSON) -> Bool) throws -> BatchJSON {
        try awaitJSON("batch \(id)", what, timeout: timeout, interval: interval, fetch: { try batch(id) }, until: predicate)
    }

    /// `wait --batch B --timeout T`
    func wait(batch: Int, timeout: Int = 25) -> CommandResult {
        run(["wait", "--batch", String(batch), "--timeout", String(timeout)], timeout: TimeInterval(timeout + 10))
    }
}
