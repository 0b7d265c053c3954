import Testing
@testable import TransferEngine

@Suite struct FilterRulesTests {
    private func include(_ pattern: String) throws(GlobSyntaxError) -> FilterRule { try FilterRule(.include, pattern, origin: "--include") }
    private func exclude(_ pattern: String) throws(GlobSyntaxError) -> FilterRule { try FilterRule(.exclude, pattern, origin: "--exclude") }

    private func refusal(_ pattern: String) -> String? {
        do {
            _ = try exclude(pattern)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aLeadingSlashAnchorsAtTheRoot() throws {
        let anchored = try exclude("/cache")
        #expect(anchored.anchored)
        #expect(anchored.matches("cache", isDirectory: true))
        #expect(anchored.matches("cache", isDirectory: false))
        #expect(!anchored.matches("a/cache", isDirectory: true))
        let deep = try exclude("/a/*.tmp")
        #expect(deep.matches("a/x.tmp", isDirectory: false))
        #expect(!deep.matches("b/a/x.tmp", isDirectory: false))
        #expect(!deep.matches("a/b/x.tmp", isDirectory: false))
    }

    @Test func otherwiseAPatternMatchesAtTheEndOfThePath() throws {
        let name = try exclude("*.tmp")
        #expect(name.matches("x.tmp", isDirectory: false))
        #expect(name.matches("a/b/x.tmp", isDirectory: false))
        #expect(!name.matches("a/x.tmp/y", isDirectory: false))
        let path = try exclude("b/x.tmp")
        #expect(path.matches("a/b/x.tmp", isDirectory: false))
        #expect(path.matches("b/x.tmp", isDirectory: false))
        #expect(!path.matches("a/xb/x.tmp", isDirectory: false))
        let cache = try exclude("cache")
        #expect(cache.matches("a/cache", isDirectory: true), "without a trailing slash: directories too")
        #expect(cache.matches("a/cache", isDirectory: false))
        #expect(!cache.matches("a/cache/x", isDirectory: false), "what is below is the directory's business")
    }

    @Test func aTrailingSlashMatchesDirectoriesOnly() throws {
        let rule = try exclude("cache/")
        #expect(rule.directoryOnly)
        #expect(rule.matches("cache", isDirectory: true))
        #expect(rule.matches("a/b/cache", isDirectory: true))
        #expect(!rule.matches("a/cache", isDirectory: false))
        let both = try exclude("/build/")
        #expect(both.anchored && both.directoryOnly)
        #expect(both.matches("build", isDirectory: true))
        #expect(!both.matches("src/build", isDirectory: true))
        #expect(!both.matches("build", isDirectory: false))
        let everyDirectory = try include("*/")
        #expect(everyDirectory.matches("a", isDirectory: true))
        #expect(everyDirectory.matches("a/b/c", isDirectory: true))
        #expect(!everyDirectory.matches("a.jpg", isDirectory: false))
    }

    /// rsync's two special cases around `**`.
    @Test func aLeadingTwoStarSlashAlsoMatchesAtTheRootAndATrailingThreeStarsTheDirectory() throws {
        for pattern in ["**/cache", "/**/cache"] {
            let rule = try exclude(pattern)
            #expect(rule.matches("cache", isDirectory: true), "\(pattern)")
            #expect(rule.matches("a/cache", isDirectory: false), "\(pattern)")
            #expect(rule.matches("a/b/cache", isDirectory: true), "\(pattern)")
            #expect(!rule.matches("mycache", isDirectory: true), "\(pattern)")
        }
        let inside = try exclude("cache/**")
        #expect(!inside.matches("cache", isDirectory: true), "without the third star: only what is inside")
        #expect(inside.matches("cache/x", isDirectory: false))
        let all = try exclude("cache/***")
        #expect(all.matches("cache", isDirectory: true))
        #expect(all.matches("a/cache", isDirectory: true))
        #expect(all.matches("cache/x/y", isDirectory: false))
        #expect(!all.matches("cache", isDirectory: false), "a file called cache is not the directory")
        let anchored = try exclude("/cache/***")
        #expect(anchored.matches("cache", isDirectory: true))
        #expect(!anchored.matches("a/cache", isDirectory: true))
    }

    @Test func theFirstMatchingRuleWins() throws {
        let jpgOnly = FilterRules([try include("*.jpg"), try exclude("*")])
        #expect(jpgOnly.firstMatch("a.jpg", isDirectory: false)?.action == .include)
        #expect(jpgOnly.exclusion(of: "a.jpg", isDirectory: false) == nil)
        #expect(jpgOnly.exclusion(of: "a.txt", isDirectory: false)?.pattern == "*")
        // As in rsync, a directory is a path like any other: `*` excludes it, and so all below it.
        #expect(jpgOnly.exclusion(of: "photos", isDirectory: true)?.pattern == "*")
        let withDirectories = FilterRules([try include("*/"), try include("*.jpg"), try exclude("*")])
        #expect(withDirectories.exclusion(of: "photos", isDirectory: true) == nil)
        #expect(withDirectories.firstMatch("photos", isDirectory: true)?.pattern == "*/")
        #expect(withDirectories.exclusion(of: "photos/a.jpg", isDirectory: false) == nil)
        #expect(withDirectories.exclusion(of: "photos/a.txt", isDirectory: false)?.pattern == "*")

        // The same rules the other way round: the exclude comes first and wins.
        let reversed = FilterRules([try exclude("*"), try include("*.jpg")])
        #expect(reversed.exclusion(of: "a.jpg", isDirectory: false)?.pattern == "*")
        let keepOne = FilterRules([try include("keep.tmp"), try exclude("*.tmp")])
        #expect(keepOne.exclusion(of: "a/keep.tmp", isDirectory: false) == nil)
        #expect(keepOne.exclusion(of: "a/other.tmp", isDirectory: false)?.pattern == "*.tmp")
    }

    @Test func aPathNoRuleMatchesIsIncluded() throws {
        #expect(FilterRules().firstMatch("anything", isDirectory: false) == nil)
        #expect(FilterRules().isEmpty)
        let rules = FilterRules([try exclude("*.tmp"), try exclude("cache/")])
        #expect(rules.firstMatch("a/b.txt", isDirectory: false) == nil)
        // A directory-only rule is passed over for a file of that name, and the next one decides.
        let next = FilterRules([try include("x/"), try exclude("x")])
        #expect(next.exclusion(of: "x", isDirectory: true) == nil)
        #expect(next.exclusion(of: "x", isDirectory: false)?.directoryOnly == false)
    }

    @Test func emptyAndBadPatternsAreRefusedNamingTheOption() {
        #expect(refusal("") == "--exclude '': an empty pattern matches nothing")
        #expect(refusal("/") == "--exclude '/': an empty pattern matches nothing")
        #expect(refusal("//") == "--exclude '//': an empty pattern matches nothing")
        #expect(refusal("[ab/")?.hasPrefix("--exclude '[ab/': '[' starts a character class") == true)
        #expect(refusal("/x/") == nil)
    }

    @Test func aRuleDescribesItselfAsGiven() throws {
        #expect(try exclude("*.tmp").description == "--exclude '*.tmp'")
        #expect(try include("/it's/").description == "--include '/it'\\''s/'")
    }

    @Test func anExcludeFileHasOnePatternALine() throws {
        let text = "# editor files\n*.swp\n\n   \n\t\n*~\r\n#not a rule\n/build/\n  spaced \nlast"
        let rules = try FilterRules.excludeFile(text, named: "ignore.txt")
        #expect(rules.map(\.pattern) == ["*.swp", "*~", "/build/", "  spaced ", "last"])
        #expect(rules.allSatisfy { $0.action == .exclude })
        #expect(rules.map(\.origin) == ["--exclude-from ignore.txt:2", "--exclude-from ignore.txt:6",
                                        "--exclude-from ignore.txt:8", "--exclude-from ignore.txt:9",
                                        "--exclude-from ignore.txt:10"])
        #expect(try FilterRules.excludeFile("", named: "f").isEmpty)
        #expect(try FilterRules.excludeFile("\n\n# only comments\n", named: "f").isEmpty)
        do {
            _ = try FilterRules.excludeFile("ok\n[bad\n", named: "ignore.txt")
            Issue.record("a bad line was taken")
        } catch {
            #expect(error.message.hasPrefix("--exclude-from ignore.txt:2 '[bad': "))
        }
    }
}
