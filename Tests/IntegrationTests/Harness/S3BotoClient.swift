import Foundation

/// boto3 against one S3 server, through `s3_client.py` next to this file, run by a venv's python
/// with the server's key in its environment alone: reads back and sets up what the tests check,
/// whichever implementation answers (moto, `rclone serve s3`, SeaweedFS).
struct S3BotoClient {
    let endpoint: String
    let bucket: String
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`.
    let environment: [String: String]
    let python: URL
    let runner: CommandRunner

    /// Runs `s3_client.py ARGS`; its JSON output.
    func run(_ arguments: [String], timeout: TimeInterval = 120) throws -> Any {
        let result = runner.run(python, [S3Server.clientScript.path] + arguments, timeout: timeout,
                                environment: environment.merging(["S3_ENDPOINT": endpoint, "S3_BUCKET": bucket]) { $1 })
        guard result.exitCode == 0 else { throw HarnessError("s3_client.py \(arguments.joined(separator: " ")): \(result.summary)") }
        do {
            return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        } catch {
            throw HarnessError("s3_client.py: not JSON: \(result.summary)")
        }
    }

    /// Makes the bucket if it is missing and stores and deletes a probe object, retrying within
    /// `seconds` (a server may listen before it can store).
    func awaitReady(seconds: Int) throws {
        _ = try run(["ready", String(seconds)], timeout: TimeInterval(seconds + 30))
    }

    /// The object's SHA-256 and size as boto3 reads it back (GetObject), nil when there is none.
    func objectSHA256(_ key: String) throws -> (sha256: String, size: Int64)? {
        guard let object = try run(["sha256", key]) as? [String: Any] else { throw HarnessError("sha256: not an object") }
        if object["missing"] != nil { return nil }
        guard let sha = object["sha256"] as? String, let size = jsonInt(object["size"]) else {
            throw HarnessError("sha256: \(object)")
        }
        return (sha, Int64(size))
    }

    /// HeadObject's `ContentLength`, `ETag`, `ContentType`, `Metadata`; nil when there is none.
    func head(_ key: String) throws -> [String: Any]? {
        guard let object = try run(["head", key]) as? [String: Any] else { throw HarnessError("head: not an object") }
        return object["missing"] != nil ? nil : object
    }

    func download(_ key: String, to destination: URL) throws { _ = try run(["get", key, destination.path]) }

    /// PutObject of the file's bytes (e.g. a source for download tests).
    func put(_ key: String, from source: URL) throws { _ = try run(["put", key, source.path]) }

    func createBucket(_ name: String) throws { _ = try run(["create-bucket", name]) }

    /// The bucket's multipart uploads in progress (ListMultipartUploads).
    func multipartUploads() throws -> [(key: String, uploadID: String)] {
        guard let list = try run(["uploads"]) as? [[String: Any]] else { throw HarnessError("uploads: not a list") }
        return try list.map { entry in
            guard let key = entry["key"] as? String, let id = entry["uploadId"] as? String else {
                throw HarnessError("uploads: \(entry)")
            }
            return (key, id)
        }
    }

    /// The parts the server holds for an upload (ListParts); `etag` quoted, as S3 sends it.
    func parts(key: String, uploadID: String) throws -> [(number: Int, size: Int64, etag: String)] {
        guard let list = try run(["parts", key, uploadID]) as? [[String: Any]] else { throw HarnessError("parts: not a list") }
        return try list.map { entry in
            guard let number = jsonInt(entry["number"]), let size = jsonInt(entry["size"]),
                  let etag = entry["etag"] as? String else { throw HarnessError("parts: \(entry)") }
            return (number, Int64(size), etag)
        }
    }

    /// Aborts every multipart upload of the bucket; returns how many.
    @discardableResult
    func abortAllUploads() throws -> Int {
        jsonInt((try run(["abort-all"]) as? [String: Any])?["aborted"]) ?? 0
    }
}
