import Foundation
import XCTest

/// `watch` in a real terminal (tmux), at 120 and 60 columns, on a 50-job batch: every frame fits
/// the screen, columns keep their places, nothing is left in the scrollback, and the watch of
/// a batch exits when the batch has ended — at once for one that has, or has no jobs.
final class WatchTerminalTests: IntegrationTestCase {
    override class var slowRate: String { "2m" }

    func testABatchWatchFitsTheScreenLeavesNoTrailAndExits() throws {
        let tmux = try Tmux(scratch: workDir.appendingPathComponent("tmux"))
        defer { tmux.stop() }
        let lines = try (1...50).map { index in
            let name = "file-\(index).bin"
            // The first four last seconds (a rate and an ETA to see), the rest a moment each.
            try makeSource(name, size: index <= 4 ? 6 * MiB : 256 * KiB)
            return manifestLine(key: nil, download: ["url": nginx.url(.slow, name), "output": destination(name).path])
        }
        let manifest = try cli.writeManifest(lines, to: workDir.appendingPathComponent("fifty.jsonl"))
        // 4 × 6 MiB and 46 × 256 KiB at 2 MiB/s per transfer, 4 at a time: about 5 s to watch.
        let batch = try XCTUnwrap(jsonInt(try cli.submit(manifest)["batch"]))
        let watch = "\(binaries.transferctl.path) --state-dir \(daemon.stateDir.path) watch --batch \(batch)"
        try tmux.start("wide", width: 120, height: 20, command: watch)
        try tmux.start("narrow", width: 60, height: 12, command: watch)

        var frames: [String: [[String]]] = ["wide": [], "narrow": []]
        XCTAssertTrue(poll(timeout: 60, interval: 0.2) {
            for name in ["wide", "narrow"] { frames[name]!.append(tmux.screen(name)) }
            return tmux.screen("wide").contains("EXIT=0") && tmux.screen("narrow").contains("EXIT=0")
        }, "both watches exit 0 once the batch has ended: \(tmux.screen("wide"))\n\(tmux.screen("narrow"))")
        XCTAssertEqual(try cli.batch(batch)["state"] as? String, "completed")

        for (name, width, height) in [("wide", 120, 20), ("narrow", 60, 12)] {
            // The first frame may be caught while it is being drawn (the terminal takes it in
            // pieces): the frames looked at count from the first one drawn whole, which sums up the rest.
            let moving = frames[name]!.drop { frame in !frame.contains { $0.hasPrefix("… and ") } }
                .filter { frame in frame.contains { $0.contains("running") || $0.contains("ETA") } }
            XCTAssertGreaterThan(moving.count, 2, "\(name): frames while it ran")
            for frame in frames[name]! {
                let drawn = frame.prefix { !$0.hasPrefix("EXIT=") }
                XCTAssertLessThanOrEqual(drawn.count, height - 1, "\(name): a frame fits the screen: \(frame)")
                XCTAssertTrue(drawn.allSatisfy { $0.count <= width }, "\(name): no line wider than \(width): \(frame)")
            }
            for frame in moving {
                // A row is looked at once drawn whole (it ends with its state): the screen may be
                // read while a later frame's row is half written (a CI run caught "file-21.bin
                // [---] ?" with the rest of its line still to come).
                let states = ["queued", "running", "waiting", "paused", "completed", "failed", "cancelled"]
                let rows = frame.filter { row in row.hasPrefix("file-") && states.contains { row.hasSuffix(" " + $0) } }
                func column(_ row: String, _ index: String.Index?) -> Int? { index.map { row.distance(from: row.startIndex, to: $0) } }
                XCTAssertLessThanOrEqual(Set(rows.compactMap { column($0, $0.firstIndex(of: "%")) }).count, 1,
                                         "\(name): the percent column stays in place: \(rows)")
                XCTAssertEqual(Set(rows.compactMap { row in column(row, row.lastIndex(of: " ").map(row.index(after:))) }).count, 1,
                               "\(name): so does the state column: \(rows)")
                XCTAssertTrue(frame.contains { $0.hasPrefix("… and ") && $0.contains("more") }, "\(name): the rest summed up: \(frame)")
                if name == "narrow" {
                    XCTAssertFalse(rows.contains { $0.contains("[") }, "at 60 columns the bar goes first: \(rows)")
                }
            }
            // Some frame caught transfers under way (one drawn as jobs start shows them at 0 B).
            let rows = moving.joined().filter { $0.hasPrefix("file-") && $0.contains("running") }
            let underWay = name == "narrow"
                ? rows.filter { $0.contains("%") && $0.contains("MiB/s") && $0.contains("ETA ") }
                : rows.filter { $0.contains("[#") && $0.contains("%") && $0.contains("/ 6.0 MiB") && $0.contains("ETA ") }
            XCTAssertFalse(underWay.isEmpty, "\(name): name, percent, rate and ETA (and bar and bytes at 120): \(rows)")
            // One frame left, redrawn in place: a single totals line in all the window has shown.
            let history = tmux.history(name)
            XCTAssertEqual(history.filter { $0.hasPrefix("total:") }.count, 1, "\(name): no trail of frames: \(history)")
            let last = try XCTUnwrap(history.last { $0.hasPrefix("total:") })
            XCTAssertTrue(last.hasPrefix("total: 50 jobs, 0 running, 50 ended; 35.5 MiB of 35.5 MiB"), last)
            let finished = history.filter { $0.hasPrefix("file-") }
            XCTAssertTrue(finished.allSatisfy { $0.contains("completed") || name == "narrow" }, "\(finished)")
            XCTAssertTrue(finished.allSatisfy { $0.contains("took ") && $0.contains("/s") }, "average rate and time: \(finished)")
        }
    }

    func testAWatchOfAnEndedOrEmptyBatchExitsAtOnce() throws {
        let empty = try cli.createBatch("empty")
        let watched = cli.run(["watch", "--batch", String(empty)], timeout: 10)
        XCTAssertEqual(watched.exitCode, 0, watched.summary)
        XCTAssertFalse(watched.timedOut, "an empty batch has ended: \(watched.summary)")
        XCTAssertEqual(watched.stdout, "total: 0 jobs, 0 running, 0 ended; 0 B at 0 B/s\n", watched.summary)

        let name = String(repeating: "a-long-name-", count: 9) + "done.bin"
        try makeSource(name, size: 64 * KiB)
        let id = try cli.download(nginx.url(.files, name), to: destination(name), ["--batch", String(empty)])
        try waitCompleted(id)
        let again = cli.run(["watch", "--batch", String(empty)], timeout: 10)
        XCTAssertEqual(again.exitCode, 0, again.summary)
        let lines = again.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, again.stdout)
        XCTAssertTrue(lines[0].hasPrefix(name + "  ["), "piped, the name is whole and the line uncut: \(again.stdout)")
        XCTAssertGreaterThan(lines[0].count, 120, again.stdout)
        XCTAssertEqual(lines[1], "total: 1 job, 0 running, 1 ended; 64.0 KiB of 64.0 KiB at 0 B/s", again.stdout)
    }
}
