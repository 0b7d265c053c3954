import Testing
@testable import TransferEngine

@Suite struct SpellingTests {
    @Test func countsInsertionsDeletionsReplacementsAndSwaps() {
        #expect(Spelling.distance("download", "download") == 0)
        #expect(Spelling.distance("dowload", "download") == 1)
        #expect(Spelling.distance("dowlnoad", "download") == 1)
        #expect(Spelling.distance("--ouput", "--output") == 1)
        #expect(Spelling.distance("lsit", "list") == 1)
        #expect(Spelling.distance("", "abc") == 3)
        #expect(Spelling.distance("kitten", "sitting") == 3)
    }

    @Test func suggestsOnlyWhatIsClose() {
        let commands = ["download", "upload", "list", "show", "pause", "resume", "resume-data", "limit", "wait", "watch"]
        #expect(Spelling.closest(to: "dowload", among: commands) == "download")
        #expect(Spelling.closest(to: "lsit", among: commands) == "list")
        #expect(Spelling.closest(to: "resme", among: commands) == "resume")
        #expect(Spelling.closest(to: "frobnicate", among: commands) == nil)
        #expect(Spelling.closest(to: "xy", among: commands) == nil)
        let options = ["-o", "--output", "--overwrite", "-k", "--state", "--json"]
        #expect(Spelling.closest(to: "--ouput", among: options) == "--output")
        #expect(Spelling.closest(to: "-output", among: options) == "--output")
        #expect(Spelling.closest(to: "--stat", among: options) == "--state")
        #expect(Spelling.closest(to: "--jsno", among: options) == "--json")
        #expect(Spelling.closest(to: "-x", among: options) == nil, "one letter: no guess")
        #expect(Spelling.closest(to: "--", among: options) == nil)
    }

    @Test func theEarlierCandidateWinsATie() {
        #expect(Spelling.closest(to: "wat", among: ["wait", "what"]) == "wait")
        #expect(Spelling.closest(to: "wat", among: ["what", "wait"]) == "what")
    }
}
