import Foundation

/// One HTTP exchange made by the real `curl` binary (`-sS -D -`: with `-o FILE` the body goes there), parsed: the final status (after
/// any `100 Continue`), its headers (names lowercased) and the body.
struct CurlExchange {
    let result: CommandResult
    let status: Int
    let headers: [String: String]
    let body: String

    /// Runs `/usr/bin/curl -sS -D - --max-time <maxTime> ARGS`.
    static func run(_ arguments: [String], runner: CommandRunner, maxTime: Int = 30) -> CurlExchange {
        let result = runner.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                ["-sS", "-D", "-", "--max-time", String(maxTime)] + arguments,
                                timeout: TimeInterval(maxTime + 10))
        var rest = Substring(result.stdout)
        var status = 0
        var headers: [String: String] = [:]
        while rest.hasPrefix("HTTP/"), let end = rest.range(of: "\r\n\r\n") {
            let lines = rest[..<end.lowerBound].split(separator: "\r\n")
            rest = rest[end.upperBound...]
            status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            headers = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            if !(100..<200).contains(status) { break }
        }
        return CurlExchange(result: result, status: status, headers: headers, body: String(rest))
    }

    /// For failure messages.
    var summary: String { "status \(status), headers \(headers), body \(body.prefix(500))\n\(result.summary)" }
}
