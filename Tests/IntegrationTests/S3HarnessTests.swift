import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The S3 harness itself (moto with signature checking on, the relay, the stats, boto3 reading
/// back), driven by the real curl binary and its `--aws-sigv4`: no transferd involved.
final class S3HarnessTests: ServerHarnessTestCase {
    private var s3: S3Server!
    /// SHA-256 of no bytes: the `x-amz-content-sha256` of a request without a body.
    private let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    override class var workPrefix: String { "tds3" }
    override var serverLog: (name: String, text: String)? { s3.map { ("moto", $0.log()) } }

    override func setUpWithError() throws {
        try super.setUpWithError()
        s3 = try S3Server(directory: workDir.appendingPathComponent("s3"))
        try s3.start()
    }

    override func tearDownWithError() throws {
        s3?.stop()
        try super.tearDownWithError()
    }

    /// curl signing with `key:secret` (the server's own by default).
    private func signed(_ arguments: [String], secret: String? = nil, key: String? = nil,
                        payload: String = "UNSIGNED-PAYLOAD") -> CurlExchange {
        CurlExchange.run(["--aws-sigv4", "aws:amz:\(s3.region):s3", "-u", "\(key ?? s3.accessKey):\(secret ?? s3.secretKey)",
                          "-H", "x-amz-content-sha256: \(payload)"] + arguments, runner: runner)
    }

    private func errorCode(_ exchange: CurlExchange) -> String? {
        guard let start = exchange.body.range(of: "<Code>"), let end = exchange.body.range(of: "</Code>") else { return nil }
        return String(exchange.body[start.upperBound..<end.lowerBound])
    }

    func testSignedPutIsReadBackByBoto3AndCounted() throws {
        let file = try source("a.bin", size: 3 * MiB + 17)
        let put = signed(["-T", file.path, s3.url("dir/a.bin")])
        XCTAssertEqual(put.status, 200, put.summary)
        let stored = try XCTUnwrap(try s3.objectSHA256("dir/a.bin"), "boto3 finds no object")
        XCTAssertEqual(stored.sha256, try Files.sha256(of: file, using: runner))
        XCTAssertEqual(stored.size, Int64(3 * MiB + 17))
        XCTAssertEqual(try s3.head("dir/a.bin").flatMap { jsonInt($0["ContentLength"]) }, 3 * MiB + 17)
        XCTAssertNil(try s3.objectSHA256("dir/none.bin"))
        let stats = try s3.stats()
        XCTAssertEqual(stats.requests(.putObject), 1)
        XCTAssertEqual(stats.putObjectBytes, Int64(3 * MiB + 17))
        XCTAssertEqual(stats.errors(.putObject), 0)
        XCTAssertGreaterThanOrEqual(stats.requests(.getObject), 1)  // boto3's reads

        // boto3 puts (for download tests); curl reads back, signed with the empty payload's hash.
        try s3.put("b.bin", from: file)
        let get = signed(["-o", workDir.appendingPathComponent("b.out").path, s3.url("b.bin")], payload: emptySHA256)
        XCTAssertEqual(get.status, 200, get.summary)
        XCTAssertEqual(try Files.sha256(of: workDir.appendingPathComponent("b.out"), using: runner), stored.sha256)
    }

    func testSignatureCheckingIsOn() throws {
        let file = try source("a.bin", size: 64 * KiB)
        let wrongSecret = signed(["-T", file.path, s3.url("wrong-secret.bin")], secret: "not-the-secret")
        XCTAssertEqual(wrongSecret.status, 403, wrongSecret.summary)
        XCTAssertEqual(errorCode(wrongSecret), "SignatureDoesNotMatch", wrongSecret.summary)

        let unknownKey = signed(["-T", file.path, s3.url("unknown-key.bin")], secret: "x", key: "AKIAUNKNOWNKEY000000")
        XCTAssertEqual(unknownKey.status, 403, unknownKey.summary)
        XCTAssertEqual(errorCode(unknownKey), "InvalidAccessKeyId", unknownKey.summary)

        let unsignedPut = CurlExchange.run(["-T", file.path, s3.url("unsigned.bin")], runner: runner)
        XCTAssertFalse((200..<300).contains(unsignedPut.status), "an unsigned PUT was accepted: \(unsignedPut.summary)")
        XCTAssertNotEqual(unsignedPut.status, 0, unsignedPut.summary)

        // Without x-amz-content-sha256, curl 7.88's signature does not match moto's.
        let noHashHeader = CurlExchange.run(["--aws-sigv4", "aws:amz:\(s3.region):s3", "-u", "\(s3.accessKey):\(s3.secretKey)",
                                             "-T", file.path, s3.url("no-hash.bin")], runner: runner)
        XCTAssertEqual(noHashHeader.status, 403, noHashHeader.summary)

        for key in ["wrong-secret.bin", "unknown-key.bin", "unsigned.bin", "no-hash.bin"] {
            XCTAssertNil(try s3.objectSHA256(key), "\(key) was stored")
        }
        let signedPut = signed(["-T", file.path, s3.url("signed.bin")])
        XCTAssertEqual(signedPut.status, 200, signedPut.summary)

        let unsignedGet = CurlExchange.run([s3.url("signed.bin")], runner: runner)
        XCTAssertEqual(unsignedGet.status, 403, unsignedGet.summary)
        let stats = try s3.stats()
        XCTAssertEqual(stats.requests(.putObject), 5)
        XCTAssertEqual(stats.errors(.putObject), 4)
        XCTAssertEqual(stats.errors(.getObject), 1 + 4)  // the unsigned GET, and boto3's four 404s
    }

    func testMultipartUploadWithCurl() throws {
        let part1 = try source("p1", size: 5 * MiB + 3)
        let part2 = try source("p2", size: MiB + 5)
        // `?uploads=`: curl 7.88 signs a bare `?uploads` as `uploads`, moto expects `uploads=`.
        let bare = signed(["-X", "POST", s3.url("mp.bin?uploads")], payload: emptySHA256)
        XCTAssertEqual(bare.status, 403, bare.summary)
        let create = signed(["-X", "POST", s3.url("mp.bin?uploads=")], payload: emptySHA256)
        XCTAssertEqual(create.status, 200, create.summary)
        let uploadID = try XCTUnwrap(create.body.range(of: "<UploadId>").flatMap { start in
            create.body.range(of: "</UploadId>").map { String(create.body[start.upperBound..<$0.lowerBound]) }
        }, create.summary)
        XCTAssertEqual(try s3.multipartUploads().map(\.uploadID), [uploadID])
        XCTAssertEqual(try s3.multipartUploads().map(\.key), ["mp.bin"])

        var etags: [String] = []
        for (number, part) in [part1, part2].enumerated() {
            let put = signed(["-T", part.path, s3.url("mp.bin?partNumber=\(number + 1)&uploadId=\(uploadID)")])
            XCTAssertEqual(put.status, 200, put.summary)
            etags.append(try XCTUnwrap(put.headers["etag"], put.summary))
        }
        let parts = try s3.parts(key: "mp.bin", uploadID: uploadID)
        XCTAssertEqual(parts.map(\.number), [1, 2])
        XCTAssertEqual(parts.map(\.size), [Int64(5 * MiB + 3), Int64(MiB + 5)])
        XCTAssertEqual(parts.map(\.etag), etags)
        XCTAssertTrue(etags.allSatisfy { $0.count == 34 && $0.hasPrefix("\"") }, "part ETags: \(etags)")  // "md5 hex"

        let xml = "<CompleteMultipartUpload>" + etags.enumerated().map {
            "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\($0.element)</ETag></Part>"
        }.joined() + "</CompleteMultipartUpload>"
        let body = workDir.appendingPathComponent("complete.xml")
        try Data(xml.utf8).write(to: body)
        let complete = signed(["-H", "Content-Type: application/xml", "--data-binary", "@\(body.path)",
                               s3.url("mp.bin?uploadId=\(uploadID)")])
        XCTAssertEqual(complete.status, 200, complete.summary)
        XCTAssertTrue(complete.body.contains("-2&quot;</ETag>") || complete.body.contains("-2\"</ETag>"), complete.body)

        let whole = workDir.appendingPathComponent("whole")
        try (Data(contentsOf: part1) + Data(contentsOf: part2)).write(to: whole)
        let stored = try XCTUnwrap(try s3.objectSHA256("mp.bin"))
        XCTAssertEqual(stored.sha256, try Files.sha256(of: whole, using: runner))
        XCTAssertEqual(stored.size, Int64(6 * MiB + 8))
        let copy = workDir.appendingPathComponent("copy")
        try s3.download("mp.bin", to: copy)
        XCTAssertEqual(try Data(contentsOf: copy), try Data(contentsOf: whole))
        XCTAssertTrue(try s3.multipartUploads().isEmpty)

        let stats = try s3.stats()
        XCTAssertEqual(stats.requests(.createMultipartUpload), 2)
        XCTAssertEqual(stats.errors(.createMultipartUpload), 1)
        XCTAssertEqual(stats.requests(.uploadPart), 2)
        XCTAssertEqual(stats.uploadPartBytes, Int64(6 * MiB + 8))
        XCTAssertEqual(stats.requests(.completeMultipartUpload), 1)
        XCTAssertEqual(stats.bytes(.completeMultipartUpload), Int64(xml.utf8.count))
        XCTAssertEqual(stats.putObjectBytes, 0)
        XCTAssertGreaterThanOrEqual(stats.requests(.listParts), 1)
        XCTAssertGreaterThanOrEqual(stats.requests(.listMultipartUploads), 2)
    }

    func testAbortAndAbortAll() throws {
        var ids: [String] = []
        for key in ["x.bin", "y.bin", "z.bin"] {
            let create = signed(["-X", "POST", s3.url("\(key)?uploads=")], payload: emptySHA256)
            XCTAssertEqual(create.status, 200, create.summary)
            if let start = create.body.range(of: "<UploadId>"), let end = create.body.range(of: "</UploadId>") {
                ids.append(String(create.body[start.upperBound..<end.lowerBound]))
            }
        }
        XCTAssertEqual(ids.count, 3)
        let abort = signed(["-X", "DELETE", s3.url("x.bin?uploadId=\(ids[0])")], payload: emptySHA256)
        XCTAssertEqual(abort.status, 204, abort.summary)
        XCTAssertEqual(Set(try s3.multipartUploads().map(\.key)), ["y.bin", "z.bin"])
        XCTAssertEqual(try s3.stats().requests(.abortMultipartUpload), 1)
        XCTAssertEqual(try s3.abortAllUploads(), 2)
        XCTAssertTrue(try s3.multipartUploads().isEmpty)
    }

    func testCutAndRestoreKeepState() throws {
        let file = try source("a.bin", size: 256 * KiB)
        XCTAssertEqual(signed(["-T", file.path, s3.url("kept.bin")]).status, 200)
        let port = s3.port

        try s3.cut()
        XCTAssertFalse(Sockets.acceptsConnections(port: port), "the relay still accepts after cut()")
        let refused = signed(["-T", file.path, s3.url("during-cut.bin")])
        XCTAssertEqual(refused.result.exitCode, 7, "curl should fail to connect: \(refused.summary)")

        try s3.restore()
        XCTAssertEqual(s3.port, port)
        XCTAssertTrue(Sockets.acceptsConnections(port: port))
        let get = signed(["-o", workDir.appendingPathComponent("kept.out").path, s3.url("kept.bin")], payload: emptySHA256)
        XCTAssertEqual(get.status, 200, get.summary)
        XCTAssertEqual(try Files.sha256(of: workDir.appendingPathComponent("kept.out"), using: runner),
                       try Files.sha256(of: file, using: runner))
        XCTAssertNil(try s3.objectSHA256("during-cut.bin"))
    }

    /// A body cut off mid-way: the connection is reset, nothing is stored, and the stats count
    /// only the bytes that reached moto.
    func testCutMidBodyCountsWhatArrived() throws {
        let file = try source("big.bin", size: 16 * MiB)
        try s3.resetStats()
        let output = workDir.appendingPathComponent("slow.out")
        let slow = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/curl"),
            arguments: ["-sS", "--max-time", "60", "--limit-rate", "2M", "--aws-sigv4", "aws:amz:\(s3.region):s3",
                        "-u", "\(s3.accessKey):\(s3.secretKey)", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                        "-T", file.path, s3.url("big.bin")],
            stdoutURL: output, stderrURL: output)
        defer { slow.stop(grace: 1) }
        XCTAssertTrue(poll(timeout: 20) { ((try? s3.stats().bytes(.putObject)) ?? 0) >= Int64(MiB) },
                      "moto never received 1 MiB: \(String(describing: try? s3.stats()))")
        try s3.cut()
        let status = slow.waitForExit(timeout: 20)
        XCTAssertNotNil(status, "curl still running after cut()")
        XCTAssertNotEqual(status, 0, "curl succeeded through a cut relay")
        // moto gives up on the body once the connection is gone; what it read stays counted.
        var counted: Int64 = 0
        poll(timeout: 5) {
            let now = (try? s3.stats().bytes(.putObject)) ?? 0
            defer { counted = now }
            return now == counted && now > 0
        }
        XCTAssertGreaterThanOrEqual(counted, Int64(MiB))
        XCTAssertLessThan(counted, Int64(16 * MiB), "all of a cut body was counted")
        try s3.restore()
        XCTAssertNil(try s3.objectSHA256("big.bin"), "a cut PutObject was stored")
    }
}

/// The hook through which a daemon gets the S3 credentials, and only it.
final class S3TestCaseTests: S3TestCase {
    func testOnlyTheDaemonGetsTheCredentials() throws {
        let pid = try XCTUnwrap(daemon.child?.pid)
        let raw = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let variables = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(variables.contains("AWS_ACCESS_KEY_ID=\(s3.accessKey)"))
        XCTAssertTrue(variables.contains("AWS_SECRET_ACCESS_KEY=\(s3.secretKey)"))
        XCTAssertTrue(variables.contains("AWS_REGION=us-east-1"))
        XCTAssertNil(ProcessInfo.processInfo.environment["AWS_SECRET_ACCESS_KEY"].flatMap { $0 == s3.secretKey ? $0 : nil })
        XCTAssertFalse(ChildEnvironment.sanitized.keys.contains { $0.hasPrefix("AWS_") })

        try restartDaemon(environment: ["AWS_ACCESS_KEY_ID": "other"])
        let restarted = try XCTUnwrap(daemon.child?.pid)
        let after = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(restarted)/environ"))
            .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(after.contains("AWS_ACCESS_KEY_ID=other"))
        XCTAssertFalse(after.contains { $0.hasPrefix("AWS_SECRET_ACCESS_KEY=") })
    }
}
