/// Text that came from servers, files and other users (response bodies, headers, ETags, file
/// names, messages), made safe to print on a terminal: what a terminal would obey instead of
/// show is written as an escape, so that it is seen and never acted on. JSON output needs none
/// of this (the encoder escapes controls, and must keep strings exact). Pure. Thread: any.
///
/// | in the text | shown as |
/// |---|---|
/// | LF, CR, TAB | `\n`, `\r`, `\t` |
/// | other C0 controls (ESC, BEL, NUL…) and DEL | `\x1b`, `\x07`, `\x00`, `\x7f` |
/// | a byte of a file name that is not UTF-8 (a `RawPath` escape) | `\xff` |
/// | C1 controls (U+0080–U+009F; U+009B is CSI to some terminals), bidirectional overrides and isolates, line and paragraph separators | `\u009b`, `\u202e`, `\u2028` |
///
/// Everything else, backslashes included, is shown as it is. The escapes are also what a
/// POSIX shell's `$'…'` quoting reads back as the same bytes (`CurlCommand` relies on it).
public enum TerminalText {
    public static func escape(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch kind(of: scalar) {
            case .plain: escaped.unicodeScalars.append(scalar)
            case .named(let name): escaped += "\\" + name
            case .byte(let byte): escaped += "\\x" + hex(UInt32(byte), digits: 2)
            case .invisible: escaped += "\\u" + hex(scalar.value, digits: 4)
            }
        }
        return escaped
    }

    /// Whether `escape` would change `text`.
    public static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains { kind(of: $0) != .plain }
    }

    private enum Kind: Equatable {
        case plain
        case named(String)
        case byte(UInt8)
        case invisible
    }

    private static func kind(of scalar: Unicode.Scalar) -> Kind {
        switch scalar.value {
        case 0x0A: .named("n")
        case 0x0D: .named("r")
        case 0x09: .named("t")
        case 0x00...0x1F, 0x7F: .byte(UInt8(scalar.value))
        case RawPath.escapes: .byte(UInt8(scalar.value & 0xFF))
        case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: .invisible
        default: .plain
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
