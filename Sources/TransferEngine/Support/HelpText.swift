/// A `--help` text read back as structure, so that the man pages, the completion scripts and
/// the "did you mean" suggestions come from the very text the user reads. Pure. Thread: any.
///
/// The help texts of both programs are written in one plain format, which this reads:
///
///     usage: PROGRAM SYNOPSIS            one synopsis a line; the next ones indented
///            PROGRAM OTHER SYNOPSIS
///
///     Running text, over any number        a paragraph
///     of lines.
///
///     exit status: 0 success, ...          a paragraph under a label
///
///     options:                             a label alone, then indented items:
///       -o, --output PATH   what it does     a term, two or more spaces, a description
///                           continued        deeper lines continue the description
///       --a, --b,                            a line without a description joins the
///       --c                 both             next line's term
///
///     examples:                            a label starting with "example", then lines
///       PROGRAM ...                          kept as they are
///
///     pause   what it does                 items alone: every line a term, two or more
///     resume  what it does                 spaces and a description
///
/// Blocks are separated by empty lines.
public struct HelpText: Sendable {
    public enum Block: Equatable, Sendable {
        /// The synopses of `usage:`, one a line, without `usage: `.
        case usage([String])
        /// Running text, its lines joined with spaces; `label` when it starts with `label: `.
        case paragraph(label: String?, text: String)
        /// A label alone on its line (`options`), then indented `term  description` items; or
        /// such items alone, not indented (no label).
        case list(label: String?, items: [Item])
        /// `example:` or `examples:`, then lines shown as they are (indentation removed).
        case verbatim(label: String, lines: [String])
    }

    public struct Item: Equatable, Sendable {
        public var term: String
        public var description: String
    }

    public let blocks: [Block]

    public init(_ text: String) {
        var blocks: [Block] = []
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) + [Substring("")] {
            if line.allSatisfy({ $0 == " " }) {
                if !lines.isEmpty { blocks.append(Self.block(lines)) }
                lines.removeAll()
            } else {
                lines.append(line)
            }
        }
        self.blocks = blocks
    }

    /// The synopses, in order.
    public var usage: [String] {
        blocks.flatMap { block -> [String] in
            if case .usage(let lines) = block { return lines }
            return []
        }
    }

    /// The first sentence of the first paragraph, starting lowercase, for a man page's NAME
    /// line: "Controls transferd, the resumable transfer daemon." gives "controls transferd, …".
    public var summary: String {
        for case .paragraph(nil, let text) in blocks {
            let sentence = text.prefix { $0 != "." }
            return sentence.prefix(1).lowercased() + sentence.dropFirst()
        }
        return ""
    }

    /// Every item of every list, in order.
    public var items: [Item] {
        blocks.flatMap { block -> [Item] in
            if case .list(_, let items) = block { return items }
            return []
        }
    }

    /// Every option the text names anywhere (`-o`, `--output`, `--no-schedule`), once each,
    /// in order of first appearance: a dash that starts a word, then a letter.
    public var options: [String] {
        var found: [String] = []
        for block in blocks {
            let texts: [String] = switch block {
            case .usage(let lines): lines
            case .paragraph(_, let text): [text]
            case .list(_, let items): items.flatMap { [$0.term, $0.description] }
            case .verbatim(_, let lines): lines
            }
            for text in texts {
                for option in Self.options(in: text) where !found.contains(option) { found.append(option) }
            }
        }
        return found
    }

    /// The options named in one piece of text.
    public static func options(in text: String) -> [String] {
        let characters = Array(text)
        var options: [String] = []
        var index = 0
        func isWordCharacter(_ character: Character) -> Bool {
            character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-")
        }
        while index < characters.count {
            defer { index += 1 }
            guard characters[index] == "-", index == 0 || !isWordCharacter(characters[index - 1]) else { continue }
            var end = index + 1
            // `-4`: a digit names an option only beside its long name (`-4, --ipv4`, `-6/--ipv6`);
            // elsewhere `-1` is a number.
            if end < characters.count, characters[end].isASCII, characters[end].isNumber,
               String(characters[(end + 1)...].prefix(4)).replacing(" ", with: "").hasPrefix(",--")
                || String(characters[(end + 1)...].prefix(3)).hasPrefix("/--") {
                options.append(String(characters[index...end]))
                continue
            }
            if end < characters.count, characters[end] == "-" { end += 1 }
            guard end < characters.count, characters[end].isASCII, characters[end].isLetter else { continue }
            while end < characters.count, isWordCharacter(characters[end]), characters[end] != "_" { end += 1 }
            var option = String(characters[index..<end])
            while option.hasSuffix("-") { option.removeLast() }
            options.append(option)
            index = end - 1
        }
        return options
    }

    private static func block(_ lines: [Substring]) -> Block {
        let first = lines[0]
        if first.hasPrefix("usage: ") {
            return .usage([String(first.dropFirst("usage: ".count))] + lines.dropFirst().map(trimmed))
        }
        if lines.count > 1, first.hasSuffix(":"), isLabel(first.dropLast()), lines.dropFirst().allSatisfy({ $0.hasPrefix(" ") }) {
            let label = String(first.dropLast())
            if label.hasPrefix("example") {
                let indent = lines.dropFirst().map { $0.prefix { $0 == " " }.count }.min() ?? 0
                return .verbatim(label: label, lines: lines.dropFirst().map { String($0.dropFirst(indent)) })
            }
            return .list(label: label, items: items(lines.dropFirst()))
        }
        if lines.allSatisfy({ !$0.hasPrefix(" ") && !split($0).1.isEmpty }) {
            return .list(label: nil, items: items(lines[...]))
        }
        let text = lines.map(trimmed).joined(separator: " ")
        if let colon = first.firstIndex(of: ":"), first[first.index(after: colon)...].hasPrefix(" "), isLabel(first[..<colon]) {
            return .paragraph(label: String(first[..<colon]), text: trimmed(text[text.index(after: text.firstIndex(of: ":")!)...]))
        }
        return .paragraph(label: nil, text: text)
    }

    /// Lowercase words and spaces: `options`, `global options`, `exit status`.
    private static func isLabel(_ text: Substring) -> Bool {
        guard let first = text.first, first.isLowercase else { return false }
        return text.allSatisfy { ($0.isASCII && $0.isLowercase) || $0 == " " }
    }

    private static func items(_ lines: ArraySlice<Substring>) -> [Item] {
        let itemIndent = lines.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        var items: [Item] = []
        for line in lines {
            let indent = line.prefix { $0 == " " }.count
            let content = line.dropFirst(indent)
            if indent > itemIndent, var last = items.last {
                last.description += (last.description.isEmpty ? "" : " ") + trimmed(content)
                items[items.count - 1] = last
                continue
            }
            let (term, description) = split(content)
            if var last = items.last, last.description.isEmpty {
                last.term += " " + term
                last.description = description
                items[items.count - 1] = last
            } else {
                items.append(Item(term: term, description: description))
            }
        }
        return items
    }

    /// `term  description`: the term ends at the first run of two or more spaces.
    private static func split(_ content: Substring) -> (String, String) {
        var index = content.startIndex
        while index < content.endIndex {
            let next = content.index(after: index)
            if content[index] == " ", next < content.endIndex, content[next] == " " {
                return (String(content[..<index]), trimmed(content[next...]))
            }
            index = next
        }
        return (String(content), "")
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
