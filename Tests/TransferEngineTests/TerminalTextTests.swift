import Testing
@testable import TransferEngine

@Suite struct TerminalTextTests {
    @Test func ordinaryTextIsShownAsItIs() {
        for text in ["", "job 3 completed", "é/naïve café.bin", "日本 🎉", #"C:\path\x1b (a backslash is text)"#, "tab-less"] {
            #expect(TerminalText.escape(text) == text)
            #expect(!TerminalText.needsEscaping(text))
        }
    }

    @Test func controlCharactersAreShownEscaped() {
        #expect(TerminalText.escape("a\nb\rc\td") == #"a\nb\rc\td"#)
        #expect(TerminalText.escape("\u{1B}[31mred\u{1B}[0m") == #"\x1b[31mred\x1b[0m"#)
        #expect(TerminalText.escape("\u{1B}]0;title\u{07}") == #"\x1b]0;title\x07"#)
        #expect(TerminalText.escape("\u{0}\u{1}\u{1F}\u{7F}") == #"\x00\x01\x1f\x7f"#)
        // "\r\n" is one Character in Swift; both of its scalars are escaped.
        #expect(TerminalText.escape("line\r\n") == #"line\r\n"#)
    }

    @Test func c1ControlsAndInvisibleDirectionChangesAreShownAsCodePoints() {
        #expect(TerminalText.escape("\u{9B}2J\u{85}") == #"\u009b2J\u0085"#)
        #expect(TerminalText.escape("evil\u{202E}txt.exe") == #"evil\u202etxt.exe"#)
        #expect(TerminalText.escape("\u{2066}a\u{2069}\u{200F}\u{061C}\u{2028}\u{2029}") == #"\u2066a\u2069\u200f\u061c\u2028\u2029"#)
    }

    @Test func bytesOfANameThatIsNotUTF8AreShownAsBytes() {
        let name = RawPath.string(fromBytes: Array("dir".utf8) + [0xFF, 0x2F, 0x63, 0xE9])
        #expect(TerminalText.escape(name) == #"dir\xff/c\xe9"#)
    }

    @Test func escapingTwiceChangesNothing() {
        let text = "a\u{1B}\n\u{9B}\u{202E}" + RawPath.string(fromBytes: [0x80])
        let once = TerminalText.escape(text)
        #expect(TerminalText.escape(once) == once)
        #expect(once.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) })
    }
}
