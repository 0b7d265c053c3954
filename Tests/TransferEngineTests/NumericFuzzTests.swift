import Foundation
import Testing
@testable import TransferEngine

/// Boundary numbers (Int64.min, -1, 0, 1, max-1, Int64.max, past Int64, huge doubles, numbers as
/// strings) into every numeric field of what transferd takes in: control requests, manifests,
/// resume data, command-line values and stored rows. Each must end in a clean error or in a value
/// within its documented range, and the accepted values then go through the arithmetic that uses
/// them. A trap anywhere kills this test process: passing means none happened.
@Suite struct NumericFuzzTests {
    /// JSON spellings at and past every boundary of NumericLimits, and things that are not whole numbers.
    static let jsonValues = [
        "-9223372036854775808", "-9223372036854775809", "-1", "0", "1", "2", "1000", "1001", "100000", "100001",
        "31536000", "31536001", "1099511627776", "1099511627777", "100000000000000000", "4611686018427387904",
        "4611686018427387905", "9223372036854775806", "9223372036854775807", "9223372036854775808",
        "18446744073709551616", "1e300", "-1e300", "1e17", "1.5", "0.5", "-0", "\"12\"",
        "\"9223372036854775808\"", "null", "true", "[]", "{}",
    ]

    /// Command-line spellings of the same.
    static let textValues = [
        "-9223372036854775808", "-9223372036854775809", "-1", "0", "1", "1000", "1001", "31536000", "31536001",
        "9223372036854775806", "9223372036854775807", "9223372036854775808", "99999999999999999999999", "1e3",
        "1.5", "0x10", "+1", " 1", "", "abc", "inf", "nan",
    ]

    static let job = #"{"kind":"download","url":"http://127.0.0.1:1/x","path":"/nonexistent-dir/x","headers":[],"overwrite":false,"priority":"normal","paused":true"#

    /// Every numeric field of a control request, with `#N#` where the value goes, and whether the
    /// value that decoded and passed the checks is within its range.
    static let requestFields: [(name: String, template: String, inRange: @Sendable (ControlRequest) -> Bool)] = [
        // Any version but 1 is answered `unsupported_version` before anything else is read.
        ("version", #"{"version":#N#,"command":"stats"}"#, { _ in true }),
        ("id", #"{"version":1,"id":#N#,"command":"stats"}"#, { _ in true }),  // echoed back, never computed with
        ("ids", #"{"version":1,"command":"show","ids":[#N#]}"#, { $0.ids?.allSatisfy { NumericLimits.id.contains($0.rawValue) } ?? true }),
        ("batch", #"{"version":1,"command":"list","batch":#N#}"#, { $0.batch.map(NumericLimits.id.contains) ?? true }),
        ("limit", #"{"version":1,"command":"list","limit":#N#}"#, { $0.limit.map(NumericLimits.pageSize.contains) ?? true }),
        ("before", #"{"version":1,"command":"list","before":#N#}"#, { $0.before.map { NumericLimits.id.contains($0.rawValue) } ?? true }),
        ("rate", #"{"version":1,"command":"limit","ids":[1],"rate":#N#}"#, { isRate($0.rate) }),
        ("down", #"{"version":1,"command":"limit","down":#N#}"#, { isRate($0.down) }),
        ("up", #"{"version":1,"command":"limit","up":#N#}"#, { isRate($0.up) }),
        ("job.batch", #"{"version":1,"command":"add","job":\#(job),"batch":#N#}}"#, { $0.job?.batch.map(NumericLimits.id.contains) ?? true }),
        ("job.limit", #"{"version":1,"command":"add","job":\#(job),"limit":#N#}}"#, { isRate($0.job?.limit) }),
        ("job.retries", #"{"version":1,"command":"add","job":\#(job),"retries":#N#}}"#, { $0.job?.retries.map(NumericLimits.retries.contains) ?? true }),
        ("job.resumeData.version", #"{"version":1,"command":"add","job":\#(job),"resumeData":{"version":#N#,"url":"u","path":"/p","partialPath":"/.p","bytesReceived":0}}}"#,
         { _ in true }),  // checked against the versions this daemon reads (JobValidation)
        ("job.resumeData.bytesReceived", #"{"version":1,"command":"add","job":\#(job),"resumeData":{"version":1,"url":"u","path":"/p","partialPath":"/.p","bytesReceived":#N#}}}"#,
         { $0.job?.resumeData.map { NumericLimits.bytes.contains($0.bytesReceived) } ?? true }),
        ("job.resumeData.bytesTotal", #"{"version":1,"command":"add","job":\#(job),"resumeData":{"version":1,"url":"u","path":"/p","partialPath":"/.p","bytesReceived":0,"bytesTotal":#N#}}}"#,
         { $0.job?.resumeData?.bytesTotal.map(NumericLimits.bytes.contains) ?? true }),
        ("submission.batch", #"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false,"entries":[],"batch":#N#}}"#,
         { $0.submission?.batch.map(NumericLimits.id.contains) ?? true }),
        ("submission.entries.line", #"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false,"entries":[{"line":#N#,"job":\#(job)}}]}}"#,
         { _ in true }),  // only printed in messages
        ("submission.entries.job.retries", #"{"version":1,"command":"submit","submission":{"token":"t","final":true,"reuse":false,"checksum":false,"entries":[{"line":1,"job":\#(job),"retries":#N#}}]}}"#,
         { $0.submission?.entries.allSatisfy { $0.job.retries.map(NumericLimits.retries.contains) ?? true } ?? true }),
    ]

    static func isRate(_ value: Int64?) -> Bool {
        value.map { $0 == 0 || NumericLimits.rate.contains($0) } ?? true
    }

    @Test(arguments: requestFields.indices)
    func everyRequestFieldGivesACleanErrorOrAValueInRange(field: Int) {
        let (name, template, inRange) = Self.requestFields[field]
        var accepted = 0
        for value in Self.jsonValues {
            let line = template.replacingOccurrences(of: "#N#", with: value)
            guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) else {
                continue  // bad_request: a clean error
            }
            let jobs = [request.job].compactMap { $0 } + (request.submission?.entries.map(\.job) ?? [])
            do {
                try request.checkNumbers()
                for job in jobs { try job.checkNumbers() }
            } catch {
                #expect(error.message.contains(name.split(separator: ".").last.map(String.init) ?? name), "\(name)=\(value): \(error.message)")
                continue  // invalid_argument: a clean error
            }
            #expect(inRange(request), "\(name)=\(value) was accepted out of range")
            accepted += 1
            Self.exercise(request.rate, request.down, request.up, request.job?.limit)
        }
        #expect(accepted > 0 || name == "version", "\(name): some value must be accepted")
    }

    /// The arithmetic an accepted rate goes through.
    static func exercise(_ rates: Int64?...) {
        for rate in rates {
            var bucket = TokenBucket(rate: rate)
            _ = bucket.capacity
            bucket.take(512 * 1024, now: 0)
            _ = bucket.wait(now: 1)
            bucket.setRate(rate, now: Int64.max)
            _ = bucket.wait(now: Int64.max)
        }
    }

    @Test(arguments: ["retry", "limitRate"])
    func everyManifestFieldGivesALineErrorOrAValueInRange(field: String) {
        for value in Self.jsonValues + Self.textValues.map({ "\"\($0)\"" }) {
            let line = #"{"download":{"url":"http://h/a","output":"/a","\#(field)":\#(value)}}"#
            let entries: [ManifestEntry]
            do {
                entries = try Manifest.parse(Array(line.utf8))
            } catch {
                #expect(error.line == 1)
                #expect(!error.message.isEmpty && !error.message.contains("\n"), "\(field)=\(value): \(error.message)")
                continue
            }
            let job = entries[0].job
            #expect(job.retries.map(NumericLimits.retries.contains) ?? true, "retry=\(value) accepted as \(job.retries!)")
            #expect(Self.isRate(job.limit), "limitRate=\(value) accepted as \(job.limit!)")
            #expect(throws: Never.self) { try job.checkNumbers() }
            Self.exercise(job.limit)
        }
    }

    @Test(arguments: ["version", "bytesReceived", "bytesTotal"])
    func everyResumeDataFieldGivesACleanErrorOrAValueInRange(field: String) {
        for value in Self.jsonValues {
            var fields = ["version": "1", "bytesReceived": "0", "bytesTotal": "10"]
            fields[field] = value
            let text = #"{"version":\#(fields["version"]!),"url":"http://h/a","path":"/a","partialPath":"/.a.transferd-part","bytesReceived":\#(fields["bytesReceived"]!),"bytesTotal":\#(fields["bytesTotal"]!),"headers":[]}"#
            guard let data = try? JSONDecoder().decode(ResumeData.self, from: Data(text.utf8)) else { continue }
            do {
                try data.checkNumbers()
            } catch {
                #expect(error.field == "bytesReceived" || error.field == "bytesTotal", "\(field)=\(value): \(error.message)")
                continue
            }
            #expect(NumericLimits.bytes.contains(data.bytesReceived) && data.bytesTotal.map(NumericLimits.bytes.contains) ?? true)
            #expect(data.bytesReceived <= data.bytesTotal ?? .max)
            // The daemon's validator then refuses a version it does not read, or the missing partial file.
            let job = NewJob(kind: .download, url: "http://h/a", path: "/a", paused: true, resumeData: data)
            #expect(throws: JobRefusal.self) { try JobValidation.validate(job) }
        }
    }

    @Test func everyLimitParsesCommandLineTextCleanly() {
        func parseEach<Value>(_ limit: NumericLimit<Value>, _ field: String) {
            for text in Self.textValues {
                do {
                    let value = try limit.parse(text, field)
                    #expect(limit.contains(value), "\(field): '\(text)' read as \(value)")
                    #expect(String(value) == text || "+" + String(value) == text, "\(field): '\(text)' read as \(value)")
                } catch {
                    #expect(error.message.contains(field) && error.message.contains("'\(text)'"))
                }
            }
        }
        parseEach(NumericLimits.retries, "--retry")
        parseEach(NumericLimits.rate, "rate")
        parseEach(NumericLimits.bytes, "bytes")
        parseEach(NumericLimits.timeoutSeconds, "--hook-timeout")
        parseEach(NumericLimits.transfers, "--max-active")
        parseEach(NumericLimits.id, "--batch")
        parseEach(NumericLimits.pageSize, "--limit")
        for text in Self.textValues + ["1024G", "1025G", "1099511627776", "1099511627777", "0.4", "1e300", "9223372036854775807K"] {
            do {
                let rate = try Rate.parse(text)
                #expect(Self.isRate(rate), "rate '\(text)' read as \(rate!)")
            } catch {
                #expect(!error.message.isEmpty)
            }
        }
    }

    /// Every integer column of `jobs` and `resume_data`, set to each boundary (and to text and a
    /// real): the row reads back with values in range, and quarantine names the column when the
    /// stored value was not.
    @Test func everyStoredColumnIsReadSafelyAndQuarantinedWhenOutOfRange() throws {
        let directory = TemporaryDirectory()
        let columns: [(column: String, limit: ClosedRange<Int64>, nullable: Bool)] = [
            ("batch_id", 1...Int64.max, true), ("limit_rate", 0...NumericLimits.rate.range.upperBound, true),
            ("max_retries", 0...1000, false), ("bytes_done", NumericLimits.bytes.range, false),
            ("bytes_total", NumericLimits.bytes.range, true), ("attempts", 0...Int64(Int32.max), false),
            ("http_status", 0...999, true), ("next_attempt_at", NumericLimits.time.range, true),
            ("created_at", NumericLimits.time.range, false), ("updated_at", NumericLimits.time.range, false),
            ("finished_at", NumericLimits.time.range, true),
            ("resume_data.bytes_durable", NumericLimits.bytes.range, false),
            ("resume_data.bytes_total", NumericLimits.bytes.range, true),
        ]
        let sqlValues = ["-9223372036854775808", "-1", "0", "1", "1000", "1001", "4611686018427387905",
                         "9223372036854775806", "9223372036854775807", "1e300", "-1e300", "'abc'", "'12'", "NULL"]
        for (column, range, nullable) in columns {
            for value in sqlValues where value != "NULL" || nullable {
                let path = directory.database("\(column)-\(value.hashValue).db")
                let store = try JobStore(path: path)
                let new = NewJob(kind: .download, url: "http://127.0.0.1:1/x", path: directory.file("x"), paused: true)
                let resume = ResumeState(partialPath: directory.file(".x.transferd-part"), bytesDurable: 1,
                                         validators: Validators(etag: "\"e\""), bytesTotal: 2)
                let id = try store.insert(new, maxRetries: 3, resume: resume).id
                let connection = try SQLiteConnection(path: path)
                let (table, name) = column.hasPrefix("resume_data.")
                    ? ("resume_data", String(column.dropFirst("resume_data.".count))) : ("jobs", column)
                try connection.execute("UPDATE \(table) SET \(name) = \(value) WHERE \(table == "jobs" ? "id" : "job_id") = \(id.rawValue)")

                let stored = try connection.query("SELECT typeof(\(name)), \(name) FROM \(table)") { row in (row.text(), row.optionalInt64()) }[0]
                let quarantined = try store.quarantineInvalidJobs()
                let valid = stored.0 == "null" || (stored.0 == "integer" && stored.1.map(range.contains) == true)
                if valid {
                    #expect(quarantined.isEmpty, "\(column)=\(value): quarantined \(quarantined)")
                } else {
                    #expect(quarantined.map(\.0) == [id], "\(column)=\(value) was not quarantined")
                    #expect(quarantined.first?.1.column == column)
                    #expect(quarantined.first?.1.message.contains(column) == true)
                    #expect(try store.job(id)?.isQuarantined == true)
                }
                // Whatever the row holds, reading it gives values in range, and using them cannot trap.
                let job = try #require(try store.job(id))
                #expect(NumericLimits.retries.contains(job.maxRetries) && NumericLimits.attempts.contains(job.attempts))
                #expect(NumericLimits.bytes.contains(job.bytesDone) && (job.bytesTotal.map(NumericLimits.bytes.contains) ?? true))
                #expect(NumericLimits.time.contains(job.createdAt.rawValue))
                var record = JobRecord(job: job, now: .now)
                record.renewRetryBudget(now: .now)
                record.extendRetryBudget()
                record.attemptKept(job.bytesDone, now: .now)
                _ = RetryPolicy().delay(afterAttempt: job.attempts) { $0.upperBound }
                Self.exercise(job.limit)
                let state = try #require(try store.resumeState(id))
                #expect(NumericLimits.bytes.contains(state.bytesDurable))
                _ = ResumeData(job: job, state: state)
            }
        }
    }

    @Test func aWordOrJSONTransferdDoesNotWriteIsQuarantinedNotReinterpreted() throws {
        let directory = TemporaryDirectory()
        for (column, value) in [("state", "'bogus'"), ("kind", "'ftp'"), ("priority", "'urgent'"), ("headers", "'[1'"),
                                ("headers", "'{}'"), ("upload", "'not json'"), ("tls", "'[]'")] {
            let path = directory.database("\(column)-\(value.hashValue).db")
            let store = try JobStore(path: path)
            let id = try store.insert(NewJob(kind: .download, url: "http://h/x", path: directory.file("x")), maxRetries: 3,
                                      resume: nil).id
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA ignore_check_constraints = ON; UPDATE jobs SET \(column) = \(value)")
            let quarantined = try store.quarantineInvalidJobs()
            #expect(quarantined.map(\.0) == [id] && quarantined.first?.1.column == column, "\(column)=\(value): \(quarantined)")
            let job = try #require(try store.job(id))
            #expect(job.state == .failed && job.error?.code == "invalid_job")
            #expect(try store.unfinishedJobs().isEmpty)
            #expect(try store.quarantineInvalidJobs().isEmpty, "quarantined once")
        }
    }

    @Test func arithmeticOnDurationsRatesAndSizesSaturates() {
        #expect(Timestamp(rawValue: .max - 1).adding(milliseconds: .max).rawValue == .max)
        #expect(Timestamp(rawValue: .min).adding(milliseconds: -1).rawValue == .min)
        #expect(TokenBucket(rate: .max).capacity > 0)
        #expect(TokenBucket(rate: 0).isLimited == false, "0 is unlimited: no debt could ever be repaid")
        #expect(RetryAfter.milliseconds("9223372036854775807") == Int64(NumericLimits.timeoutSeconds.range.upperBound) * 1000)
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 9223372036854775807 08:49:37 GMT") == nil)
        #expect(RetryAfter.milliseconds("Sun, 99 Nov 1994 99:49:37 GMT") == nil)
        #expect(RetryPolicy().delay(afterAttempt: .min) { $0.upperBound } == 1000)
        #expect(RetryPolicy().delay(afterAttempt: .max) { $0.upperBound } == 300_000)
        #expect(ContentRange("bytes 0-9223372036854775806/9223372036854775807") == nil)
        #expect(ResponseHead(status: 200, fields: ["content-length": "9223372036854775807"]).contentLength == nil)
        var parser = ResponseHeadParser()
        _ = parser.consume("HTTP/1.1 9223372036854775807 Huge\r\n")
        #expect(parser.consume("\r\n")?.status == 0)
        #expect(Int64(saturating: .nan) == 0 && Int64(saturating: .infinity) == .max && Int(saturating: -1e300) == .min)
        #expect(Int64.max.saturatingMultiply(1000) == .max && Int64.min.saturatingMultiply(2) == .min)
        #expect(HookResult(timedOut: true, durationMilliseconds: .max).summary.hasPrefix("timed out after"))
        let batch = Batch(record: BatchRecord(id: 1, name: "b", createdAt: Timestamp(rawValue: 0), onComplete: nil, onFail: nil,
                                              backup: nil),
                          counts: [.running: 1], bytesDone: .min, bytesTotal: .max, rate: 1)
        #expect(batch.etaSeconds == .max)
    }
}
