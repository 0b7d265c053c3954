import Testing
@testable import TransferEngine

@Suite struct GlobTests {
    /// `pattern` matches each of `yes` and none of `no`, as a whole.
    private func check(_ pattern: String, _ yes: [String], _ no: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let glob = try Glob(pattern)
        for text in yes { #expect(glob.matches(text), "\(pattern) should match \(text)", sourceLocation: sourceLocation) }
        for text in no { #expect(!glob.matches(text), "\(pattern) should not match \(text)", sourceLocation: sourceLocation) }
    }

    private func refusal(_ pattern: String) -> String? {
        do {
            _ = try Glob(pattern)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func literalsMatchThemselvesWhole() throws {
        try check("abc", ["abc"], ["", "ab", "abcd", "xabc", "ABC", "a/bc"])
        try check("a/b.txt", ["a/b.txt"], ["a/b", "a/b.txt/c", "x/a/b.txt"])
        try check("é.txt", ["é.txt"], ["e.txt"])
    }

    @Test func aStarIsAnyRunWithoutASlash() throws {
        try check("*.tmp", ["x.tmp", ".tmp", "a b.tmp", "x.tmp.tmp"], ["x.tmpl", "a/x.tmp", "x.TMP"])
        try check("a*", ["a", "abc", "a.b"], ["ba", "a/b"])
        try check("*", ["", "x", "anything at all"], ["a/b", "/"])
        try check("a*b*c", ["abc", "aXbYc", "abbbc", "acbc"], ["ab", "a/b/c", "acb"])
        try check("*/*", ["a/b", "/", "x/"], ["a", "a/b/c"])
    }

    @Test func twoStarsAreAnyRunWithSlashes() throws {
        try check("**", ["", "a", "a/b/c", "/"], [])
        try check("**.tmp", ["x.tmp", "a/b/x.tmp", "a/.tmp"], ["a/x.tmpl"])
        try check("a/**", ["a/", "a/b", "a/b/c/d"], ["a", "b/a/c"])
        // `**` between slashes needs at least one directory there, as in rsync and rclone.
        try check("a/**/c", ["a/b/c", "a/b/x/y/c"], ["a/c", "a/b/cd"])
        // Three or more stars are two.
        try check("a/***", ["a/b/c"], ["a"])
        try check("x***y", ["xy", "x/y", "x/a/b/y"], ["x/y/z"])
    }

    @Test func aQuestionMarkIsOneCharacterButASlash() throws {
        try check("?.txt", ["a.txt", "é.txt", "?.txt"], [".txt", "ab.txt", "/.txt"])
        try check("a?b", ["a-b", "axb"], ["a/b", "ab", "axxb"])
        try check("??", ["ab", "日本"], ["a", "abc"])
    }

    @Test func characterClasses() throws {
        try check("[abc]x", ["ax", "bx", "cx"], ["dx", "x", "abx"])
        try check("file[0-9].txt", ["file0.txt", "file9.txt"], ["filea.txt", "file10.txt", "file.txt"])
        try check("[a-cx-z]", ["a", "b", "c", "x", "z"], ["d", "w", "A"])
        try check("[!a-c]", ["d", "A", "é", "-"], ["a", "b", "c", "/", ""])
        try check("[^a-c]", ["d"], ["a"])
        // `]` first (or first after the negation) is a member; `-` first or last is itself.
        try check("[]a]", ["]", "a"], ["b"])
        try check("[!]a]", ["b"], ["]", "a"])
        try check("[a-]", ["a", "-"], ["b"])
        try check("[-a]", ["a", "-"], ["b"])
        try check("[\\]x]", ["]", "x"], ["\\"])
        try check("[\\-a]", ["-", "a"], ["b"])
        try check("[[:digit:]]*", ["1", "9lives"], ["x1", ""])
        try check("[[:alpha:]_][[:alnum:]]", ["a1", "_z"], ["1a", "a_"])
        try check("[![:space:]]", ["x"], [" ", "\t"])
        try check("[[:upper:][:digit:]]", ["A", "7"], ["a"])
        try check("[[:xdigit:]]", ["f", "F", "0"], ["g"])
        try check("[[:punct:]]", ["!", "_", "~"], ["a", " "])
        // A class never matches `/`, even when negated or when `/` is listed.
        try check("a[!x]b", ["a-b"], ["a/b"])
        try check("a[/]b", [], ["a/b"])
        // One character is one scalar.
        try check("caf[éè]", ["café", "cafè"], ["cafe"])
        try check("[à-ÿ]", ["é"], ["e", "ā"])
    }

    @Test func aBackslashEscapes() throws {
        try check("\\*", ["*"], ["a", ""])
        try check("\\?x", ["?x"], ["ax"])
        try check("\\[a]", ["[a]"], ["a"])
        try check("a\\\\b", ["a\\b"], ["ab"])
        try check("\\a", ["a"], ["\\a"])
        try check("*\\**", ["*", "x*y"], ["xy"])
    }

    @Test func badPatternsAreRefusedSayingWhy() {
        #expect(refusal("[abc")?.contains("no ']'") == true)
        #expect(refusal("[!")?.contains("no ']'") == true)
        #expect(refusal("[]")?.contains("no ']'") == true)
        #expect(refusal("abc\\")?.contains("escapes nothing") == true)
        #expect(refusal("[[:letters:]]")?.contains("unknown character class '[:letters:]'") == true)
        #expect(refusal("[[:alpha")?.contains("no ':]'") == true)
        #expect(refusal("[z-a]")?.contains("'z-a' runs backwards") == true)
        #expect(refusal("[z-a]")?.hasPrefix("bad pattern '[z-a]': ") == true)
        for fine in ["", "a", "*", "[a]", "\\[", "a]", "[[]", "x[a-a]"] { #expect(refusal(fine) == nil, "\(fine)") }
    }

    @Test func unanchoredMatchesAtTheEndFromAnyComponent() throws {
        let glob = try Glob("b/x.tmp")
        #expect(glob.matches("b/x.tmp", anchored: false))
        #expect(glob.matches("a/b/x.tmp", anchored: false))
        #expect(glob.matches("z/a/b/x.tmp", anchored: false))
        #expect(!glob.matches("a/xb/x.tmp", anchored: false), "starts inside a component")
        #expect(!glob.matches("a/b/x.tmp/y", anchored: false), "does not reach the end")
        #expect(!glob.matches("a/b/x.tmp"), "anchored: the whole path")
        let star = try Glob("*.tmp")
        #expect(star.matches("a/b/x.tmp", anchored: false))
        #expect(!star.matches("a/x.tmp/b", anchored: false))
        let name = try Glob("cache")
        #expect(name.matches("a/cache", anchored: false))
        #expect(!name.matches("a/mycache", anchored: false))
        #expect(!name.matches("a/cache/b", anchored: false))
    }

    /// Names that are not UTF-8 arrive as `RawPath` strings, and so do patterns from the command
    /// line or a file: each such byte is one character, matched as itself.
    @Test func namesThatAreNotUTF8() throws {
        let name = RawPath.string(fromBytes: Array("dir".utf8) + [0xFF] + Array("/caf".utf8) + [0xE9] + Array(".txt".utf8))
        #expect(try Glob("dir?/*.txt").matches(name))
        #expect(try Glob("*/caf?.txt").matches(name))
        #expect(try Glob(RawPath.string(fromBytes: Array("*/caf".utf8) + [0xE9] + Array("*".utf8))).matches(name))
        #expect(try !Glob(RawPath.string(fromBytes: Array("*/caf".utf8) + [0xE8] + Array("*".utf8))).matches(name))
        #expect(try !Glob("*/café.txt").matches(name), "the byte E9 is not the character é")
        #expect(try Glob("[!a]").matches(RawPath.string(fromBytes: [0x80])))
    }

    /// A backtracking matcher takes exponential time on these; this one takes (text × pattern) steps.
    @Test func pathologicalPatternsFinishFast() throws {
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            let text = String(repeating: "a", count: 10_000)
            #expect(try !Glob("*a*a*a*a*a*a*a*a*a*a*b").matches(text))
            #expect(try !Glob("**a**a**a**a**a**a**a**a**b").matches(text))
            #expect(try Glob("*a*a*a*a*a*a*a*a*a*a").matches(text))
            let deep = Array(repeating: "a", count: 2_000).joined(separator: "/")
            #expect(try !Glob("**/a*a*a*a*a*a*b").matches(deep, anchored: false))
            #expect(try !Glob("a/**/a/**/a/**/a/**/a/**/b").matches(deep, anchored: false))
            #expect(try Glob("a/**/a/**/a/**/a").matches(deep, anchored: false))
            let long = try Glob(String(repeating: "*a", count: 200) + "b")  // more positions than one word
            #expect(!long.matches(String(repeating: "a", count: 2_000)))
            #expect(long.matches(String(repeating: "a", count: 200) + "b"))
        }
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }
}
