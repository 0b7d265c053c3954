import Foundation
import XCTest

/// File names that are not UTF-8, given on transferctl's command line as bytes: a download
/// is written under exactly those bytes, an upload reads exactly that file, and JSON carries
/// the name losslessly (each byte that is not UTF-8 as U+EF00 + byte). (Backups of such names:
/// BackupTests, WebDAVBackupTests.)
final class RawNameTests: UploadTestCase {
    /// `caf\xe9/\xff.bin` under the downloads directory.
    private var rawDestination: [UInt8] {
        RawFiles.path(downloads, Array("caf".utf8) + [0xE9, UInt8(ascii: "/"), 0xFF] + Array(".bin".utf8))
    }

    private func jobID(_ result: CommandResult, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        XCTAssertEqual(result.exitCode, 0, result.summary, file: file, line: line)
        return try XCTUnwrap(Int(result.trimmedStdout), "a job id: \(result.summary)", file: file, line: line)
    }

    func testADownloadIsWrittenUnderTheExactBytesOfItsDestination() throws {
        let size = 300 * KiB + 5
        let source = try nginx.createFile(named: "src.bin", size: size)
        let id = try jobID(cli.run(rawArguments: [Array("download".utf8), Array(nginx.url(.files, "src.bin").utf8),
                                                  Array("-o".utf8), rawDestination]))
        try waitCompleted(id)

        XCTAssertEqual(RawFiles.read(rawDestination), try Data(contentsOf: source), "the file under its exact name")
        let directory = Array(rawDestination.dropLast(".bin".utf8.count + 2))
        XCTAssertEqual(RawFiles.names(in: directory), [[0xFF] + Array(".bin".utf8)], "no partial file, no other name")
        let job = try cli.job(id)
        XCTAssertEqual(job["path"] as? String, downloads.path + "/caf\u{EFE9}/\u{EFFF}.bin", "JSON: \(job.jsonText)")
    }

    func testAnUploadReadsTheFileItsNameNames() throws {
        let data = Files.randomData(count: 70 * KiB + 3)
        let path = RawFiles.path(sources, Array("caf".utf8) + [0xE9] + Array(".bin".utf8))
        try RawFiles.write(data, to: path)
        // A file whose name is the UTF-8 spelling that the bytes would be "repaired" into must
        // not be the one sent.
        try Files.randomData(count: 10).write(to: sources.appendingPathComponent("caf\u{FFFD}.bin"))

        let id = try jobID(cli.run(rawArguments: [Array("upload".utf8), Array(receiver.rawURL("sent").utf8),
                                                  Array("-T".utf8), path]))
        try waitCompleted(id)
        XCTAssertEqual(try Data(contentsOf: receiver.rawFile("sent")), data, "the body is the file's bytes")
        XCTAssertEqual(try cli.job(id)["path"] as? String, sources.path + "/caf\u{EFE9}.bin")
    }
}
