import Testing
@testable import TransferEngine

@Suite struct S3LocationTests {
    @Test func parsesBucketAndKeyAsWritten() throws {
        let location = try S3Location(parsing: "s3://my-bucket.example/dir/a%20b+c.bin")
        #expect(location.bucket == "my-bucket.example")
        #expect(location.key == "dir/a%20b+c.bin", "the key is literal, as the AWS CLI reads it")
        #expect(location.uri == "s3://my-bucket.example/dir/a%20b+c.bin")
        #expect(try S3Location(parsing: "s3://abc//lead").key == "/lead")
    }

    @Test(arguments: [
        ("https://b/k", S3LocationError.Reason.notS3URI), ("s3:/b/k", .notS3URI), ("s3://bucket", .emptyKey),
        ("s3://bucket/", .emptyKey), ("s3://ab/k", .bucketLength), ("s3://" + String(repeating: "a", count: 64) + "/k", .bucketLength),
        ("s3://My-Bucket/k", .bucketCharacters), ("s3://my_bucket/k", .bucketCharacters), ("s3://-bucket/k", .bucketShape),
        ("s3://bucket-/k", .bucketShape), ("s3://my..bucket/k", .bucketShape), ("s3://192.168.1.10/k", .bucketShape),
        ("s3://.abc/k", .bucketShape),
    ])
    func refusesWhatS3Refuses(uri: String, reason: S3LocationError.Reason) {
        #expect(throws: S3LocationError(uri, reason)) { try S3Location(parsing: uri) }
    }

    @Test func keysAreAtMost1024Bytes() throws {
        let longest = String(repeating: "é", count: 512)  // 1024 bytes
        #expect(try S3Location(bucket: "abc", key: longest).key == longest)
        do {
            _ = try S3Location(bucket: "abc", key: longest + "x")
            Issue.record("a 1025-byte key was accepted")
        } catch {
            #expect(error.reason == .keyTooLong(bytes: 1025))
            #expect(error.message.contains("1024 bytes"), "\(error.message)")
        }
    }

    @Test func messagesSayWhatToWrite() {
        #expect(S3LocationError("https://b/k", .notS3URI).message == "'https://b/k' is not an S3 location: write s3://BUCKET/KEY")
        #expect(S3LocationError("My", .bucketCharacters).message.contains("lowercase letters, digits, dots and hyphens"))
    }

    @Test func customEndpointsArePathStyle() throws {
        let endpoint = try S3Endpoint(url: "http://127.0.0.1:9000/", region: "us-east-1")
        let location = try S3Location(parsing: "s3://bucket/dir/a b+ü~.bin")
        #expect(location.objectURL(endpoint) == "http://127.0.0.1:9000/bucket/dir/a%20b%2B%C3%BC~.bin")
        #expect(location.objectURL(endpoint, .uploadPart(number: 3, uploadId: "a/b+c=="))
                == "http://127.0.0.1:9000/bucket/dir/a%20b%2B%C3%BC~.bin?partNumber=3&uploadId=a%2Fb%2Bc%3D%3D")
        let hosted = try S3Endpoint(url: "HTTPS://minio.example:9000", region: "eu-1", addressing: .virtualHosted)
        #expect(location.objectURL(hosted) == "https://bucket.minio.example:9000/dir/a%20b%2B%C3%BC~.bin")
        let based = try S3Endpoint(url: "https://gw.example/s3", region: "us-east-1")
        #expect(location.objectURL(based) == "https://gw.example/s3/bucket/dir/a%20b%2B%C3%BC~.bin")
    }

    @Test func awsIsVirtualHostedUnlessTheBucketHasDots() throws {
        let aws = try S3Endpoint(region: "eu-west-1")
        #expect(try S3Location(parsing: "s3://bucket/k").objectURL(aws, .createMultipartUpload)
                == "https://bucket.s3.eu-west-1.amazonaws.com/k?uploads=")
        #expect(try S3Location(parsing: "s3://my.bucket/k").objectURL(aws) == "https://s3.eu-west-1.amazonaws.com/my.bucket/k")
        let path = try S3Endpoint(region: "eu-west-1", addressing: .path)
        #expect(try S3Location(parsing: "s3://bucket/k").objectURL(path) == "https://s3.eu-west-1.amazonaws.com/bucket/k")
    }

    @Test func queriesAreSortedEncodedAndKeepTheirEquals() {
        #expect(S3Query.none.encoded == "")
        #expect(S3Query.createMultipartUpload.encoded == "?uploads=", "libcurl 7.88 signs a bare 'uploads' wrongly")
        #expect(S3Query.upload("x~y z").encoded == "?uploadId=x~y%20z")
        #expect(S3Query.listParts(uploadId: "U", partNumberMarker: 7).encoded == "?max-parts=1000&part-number-marker=7&uploadId=U")
        #expect(S3Query.listParts(uploadId: "U").encoded == "?max-parts=1000&uploadId=U")
        #expect(S3Query([.init("uploads"), .init("prefix", "p"), .init("key-marker", "k"), .init("upload-id-marker", "u")]).encoded
                == "?key-marker=k&prefix=p&upload-id-marker=u&uploads=", "'-' (0x2D) sorts before 's'")
        #expect(S3Query([.init("b", "2"), .init("a", "9"), .init("a", "1"), .init("B", "")]).encoded == "?B=&a=1&a=9&b=2",
                "by code point, then by value")
    }

    @Test func encodingKeepsOnlyUnreservedBytes() {
        #expect(S3Encoding.path("a/b c/..~_-.") == "a/b%20c/..~_-.")
        #expect(S3Encoding.component("a/b=c&d+e*") == "a%2Fb%3Dc%26d%2Be%2A")
        #expect(S3Encoding.component("\u{0}\u{7F}é") == "%00%7F%C3%A9")
    }

    @Test(arguments: ["minio:9000", "ftp://h", "http://", "http://:9000", "http://u:p@h", "http://h/?x=1", "http://h/#f",
                      "http://h h"])
    func refusesEndpointsThatAreNotHTTPServers(url: String) {
        #expect(throws: S3LocationError.self) { try S3Endpoint(url: url, region: "us-east-1") }
    }

    @Test func endpointErrorsDoNotShowPasswords() {
        do {
            _ = try S3Endpoint(url: "http://u:s3cret@h", region: "us-east-1")
        } catch {
            #expect(!error.message.contains("s3cret"), "\(error.message)")
        }
    }

    @Test(arguments: ["", "us east", "us-east-1:x", "a.b", String(repeating: "a", count: 65)])
    func refusesRegionsThatCannotBeSigned(region: String) {
        #expect(throws: S3LocationError(region, .region)) { try S3Endpoint(region: region) }
    }
}
