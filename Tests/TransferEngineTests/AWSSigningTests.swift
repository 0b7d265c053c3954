import CTransferSupport
import Foundation
import Glibc
import Testing
@testable import TransferEngine

@Suite(.serialized) struct AWSSigningTests {
    static let credentials = AWSCredentials(accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let temporary = AWSCredentials(accessKeyId: "ASIAEXAMPLE", secretAccessKey: "s3cretKey", sessionToken: "t0ken/+=")

    @Test func headersSayHowThePayloadIsSigned() throws {
        let signing = try AWSSigning(region: "eu-west-1", credentials: Self.credentials)
        #expect(signing.provider == "aws:amz:eu-west-1:s3")
        #expect(signing.headers(hasBody: true) == ["x-amz-content-sha256: UNSIGNED-PAYLOAD"])
        #expect(signing.headers(hasBody: false)
                == ["x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"])
        var sha = SHA256()
        sha.update([UInt8]())
        #expect(sha.finalizeHex() == AWSSigning.emptyPayloadSHA256)
        let withToken = try AWSSigning(region: "us-east-1", credentials: Self.temporary)
        #expect(withToken.headers(hasBody: true) == ["x-amz-content-sha256: UNSIGNED-PAYLOAD", "x-amz-security-token: t0ken/+="])
        #expect(withToken.headers(hasBody: true, existing: ["X-Amz-Content-SHA256 : abc"]) == ["x-amz-security-token: t0ken/+="])
        #expect(throws: S3LocationError.self) { try AWSSigning(region: "us:east", credentials: Self.credentials) }
    }

    @Test func secretsNeverPrint() throws {
        let signing = try AWSSigning(region: "us-east-1", credentials: Self.temporary)
        var dumped = ""
        dump(signing, to: &dumped)
        var request = CurlEasy.Request(url: "https://b.s3.us-east-1.amazonaws.com/k")
        request.awsSigning = signing
        for text in [signing.description, "\(signing)", String(reflecting: signing), dumped, "\(request)"] {
            #expect(!text.contains("s3cretKey") && !text.contains("t0ken"), "\(text)")
        }
    }

    /// libcurl signs the request CurlEasy sets up; the signature is checked here as an S3
    /// server checks it, from the request as it arrived.
    @Test func curlEasySignsWhatS3Verifies() throws {
        let location = try S3Location(parsing: "s3://bucket/dir/a b/../c+d.bin")
        let head = try RequestCapture.capture { port in
            let endpoint = try S3Endpoint(url: "http://127.0.0.1:\(port)", region: "eu-west-1")
            var request = CurlEasy.Request(url: location.objectURL(endpoint, .uploadPart(number: 2, uploadId: "u/p+id=")))
            request.awsSigning = try AWSSigning(region: "eu-west-1", credentials: Self.temporary)
            request.network.user = "basic"  // replaced by the signature, never sent
            request.network.password = "basicPassword"
            request.followRedirects = false
            request.body = CurlEasy.Body(method: "PUT", length: 3)
            return request
        }
        #expect(head.requestLine == "PUT /bucket/dir/a%20b/../c%2Bd.bin?partNumber=2&uploadId=u%2Fp%2Bid%3D HTTP/1.1",
                "the path as written (no dot segments removed) and the query in canonical order")
        #expect(head.header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD")
        #expect(head.header("x-amz-security-token") == "t0ken/+=")
        let authorization = try #require(head.header("authorization"))
        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE/"))
        #expect(authorization.contains("/eu-west-1/s3/aws4_request,"))
        #expect(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        #expect(head.verifySignature(secret: "s3cretKey"))
    }

    @Test func aRequestWithoutBodyHashesTheEmptyPayloadAndBareUploadsGetsItsEquals() throws {
        let location = try S3Location(parsing: "s3://bucket/k")
        let head = try RequestCapture.capture { port in
            let endpoint = try S3Endpoint(url: "http://127.0.0.1:\(port)", region: "us-east-1")
            var request = CurlEasy.Request(url: location.objectURL(endpoint, .createMultipartUpload))
            request.method = "POST"
            request.headers = ["Content-Type: application/xml"]
            request.awsSigning = try AWSSigning(region: "us-east-1", credentials: Self.credentials)
            return request
        }
        #expect(head.requestLine == "POST /bucket/k?uploads= HTTP/1.1")
        #expect(head.header("x-amz-content-sha256") == AWSSigning.emptyPayloadSHA256)
        #expect(head.header("x-amz-security-token") == nil)
        #expect(head.header("authorization")?.contains("SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,") == true)
        #expect(head.verifySignature(secret: Self.credentials.secretAccessKey))
    }

    /// libcurl adds `Expect: 100-continue` to a body over 1 MiB itself (unsigned, which S3
    /// accepts), and does not wait for the `100` that never comes here.
    @Test func aLargeBodyDoesNotWaitForContinue() throws {
        let start = ContinuousClock.now
        let head = try RequestCapture.capture { port in
            var request = CurlEasy.Request(url: "http://127.0.0.1:\(port)/bucket/k?partNumber=1&uploadId=u")
            request.awsSigning = try AWSSigning(region: "us-east-1", credentials: Self.credentials)
            request.body = CurlEasy.Body(method: "PUT", length: 4 << 20)
            return request
        }
        #expect(ContinuousClock.now - start < .milliseconds(900))
        #expect(head.header("expect") == "100-continue")
        #expect(head.header("authorization")?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date,") == true)
        #expect(head.verifySignature(secret: Self.credentials.secretAccessKey))
    }

    @Test func noSignatureWhereCredentialsMayNotGo() throws {
        let head = try RequestCapture.capture { port in
            var request = CurlEasy.Request(url: "http://127.0.0.1:\(port)/bucket/k")
            request.awsSigning = try AWSSigning(region: "us-east-1", credentials: Self.temporary)
            request.sendsCredentials = false
            return request
        }
        #expect(head.header("authorization") == nil)
        #expect(head.header("x-amz-security-token") == nil)
    }
}

/// One HTTP request head received on a loopback socket (answered 200), and SigV4 checked
/// against it as a server checks it.
struct RequestCapture {
    var requestLine: String
    var headers: [(String, String)]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name }?.1
    }

    /// Sends `make(port)`'s request with `curl_easy_perform` and returns what arrived.
    static func capture(_ make: (Int) throws -> CurlEasy.Request) throws -> RequestCapture {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(listener, raw, length) == 0, listen(listener, 1) == 0,
                      getsockname(listener, raw, &length) == 0 else { throw CaptureError() }
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let received = LockedText()
        let server = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var timeout = timeval(tv_sec: 3, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // The head, and (when it announces one) a first byte of the body before answering.
            func bodyStarted() -> Bool {
                let text = String(decoding: bytes, as: UTF8.self)
                guard let end = text.range(of: "\r\n\r\n") else { return false }
                return !text.lowercased().contains("content-length:") || text[end.upperBound...].utf8.count > 0
            }
            while !bodyStarted() {
                let count = read(connection, &buffer, buffer.count)
                if count <= 0 { break }
                bytes += buffer[..<count]
            }
            received.set(String(decoding: bytes, as: UTF8.self))
            let answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            _ = answer.withCString { write(connection, $0, strlen($0)) }
            shutdown(connection, Int32(SHUT_WR))
            while read(connection, &buffer, buffer.count) > 0 {}
            close(connection)
        }
        server.start()
        let request = try make(port)
        let easy = try CurlEasy(request)
        var sent = 0
        let bodyLength = Int(request.body?.length ?? 0)
        easy.onRead = { buffer in
            let count = min(buffer.count, bodyLength - sent)
            buffer.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "a"))
            sent += count
            return .bytes(count)
        }
        _ = tds_curl_easy_perform(easy.handle)
        while !server.isFinished { usleep(1000) }
        let head = received.get().components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n")
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return RequestCapture(requestLine: head[0], headers: headers)
    }

    /// The signature S3 would compute from this request: canonical request from the request
    /// line as received and the signed headers' values, payload hash from x-amz-content-sha256.
    func verifySignature(secret: String) -> Bool {
        guard let authorization = header("authorization"), let date = header("x-amz-date"),
              let payload = header("x-amz-content-sha256") else { return false }
        func field(_ name: String) -> String? {
            authorization.components(separatedBy: ", ").compactMap { part -> String? in
                guard let range = part.range(of: name + "=") else { return nil }
                return String(part[range.upperBound...])
            }.first
        }
        guard let credential = field("Credential"), let signed = field("SignedHeaders"), let signature = field("Signature")
        else { return false }
        let scope = credential.split(separator: "/").dropFirst().joined(separator: "/")
        let target = requestLine.split(separator: " ")[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let canonicalHeaders = signed.split(separator: ";").map { "\($0):\(header(String($0)) ?? "")\n" }.joined()
        let canonical = [String(requestLine.split(separator: " ")[0]), String(path[0]), path.count > 1 ? String(path[1]) : "",
                         canonicalHeaders, signed, payload].joined(separator: "\n")
        let stringToSign = ["AWS4-HMAC-SHA256", date, scope, Self.hex(Self.sha256(Array(canonical.utf8)))].joined(separator: "\n")
        var key = Array(("AWS4" + secret).utf8)
        for part in scope.split(separator: "/") { key = Self.hmac(key, Array(part.utf8)) }
        return Self.hex(Self.hmac(key, Array(stringToSign.utf8))) == signature
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var sha = SHA256()
        sha.update(bytes)
        let hex = Array(sha.finalizeHex().utf8)
        return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0...($0 + 1)], as: UTF8.self), radix: 16)! }
    }

    static func hmac(_ key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? sha256(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        return sha256(block.map { $0 ^ 0x5C } + sha256(block.map { $0 ^ 0x36 } + message))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    struct CaptureError: Error {}

    /// Text handed from the server thread.
    final class LockedText: @unchecked Sendable {  // (guarded by `lock`)
        private let lock = NSLock()
        private var text = ""
        func set(_ value: String) { lock.withLock { text = value } }
        func get() -> String { lock.withLock { text } }
    }
}
