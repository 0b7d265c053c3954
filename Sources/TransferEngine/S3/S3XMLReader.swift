/// A minimal XML reader for S3's answers: walks the elements of one document and hands each
/// element's local name (`ns:Key` is `Key`) when it opens, and its decoded text when it closes.
/// It checks what it must not guess at (tags are closed in order, one root, no text outside
/// it, entities it knows), skips the XML declaration, comments, processing instructions and
/// attributes, keeps CDATA as text, and refuses DTDs (so no entity of a document's own is
/// ever expanded). Never traps on any input; no recursion. Pure. Thread: a value; any.
struct S3XMLReader {
    enum Event {
        case open(String)
        /// The element's own text (empty for one with child elements).
        case close(String, text: String)
    }

    /// Deeper documents are refused (S3's are 3 levels deep).
    static let maximumDepth = 32

    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) throws(S3XMLError) {
        guard bytes.count <= S3XML.maximumDocumentBytes else {
            throw .tooLarge(bytes: bytes.count, limit: S3XML.maximumDocumentBytes)
        }
        self.bytes = bytes
    }

    /// Calls `visit` with each event and the depth of its element (the root is 1). The root
    /// must be `root` (or `alternative`); nil accepts any. Returns the root's local name.
    @discardableResult
    func walk(root: String?, or alternative: String? = nil, _ visit: (Event, Int) throws(S3XMLError) -> Void) throws(S3XMLError) -> String {
        var open: [(name: String, text: [UInt8], hasChildren: Bool)] = []
        var rootName: String?
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                if open.isEmpty {
                    guard bytes[index..<end].allSatisfy(Self.isSpace) else { throw .malformed(.textOutsideRoot, offset: index) }
                } else if !open[open.count - 1].hasChildren {
                    try decodeText(index..<end, into: &open[open.count - 1].text)
                }
                index = end
                continue
            }
            if hasPrefix("<?", at: index) {
                index = try end(of: "?>", from: index + 2, .unterminatedDeclaration)
            } else if hasPrefix("<!--", at: index) {
                index = try end(of: "-->", from: index + 4, .unterminatedComment)
            } else if hasPrefix("<![CDATA[", at: index) {
                let end = try self.end(of: "]]>", from: index + 9, .unterminatedCDATA)
                guard !open.isEmpty else { throw .malformed(.textOutsideRoot, offset: index) }
                if !open[open.count - 1].hasChildren { open[open.count - 1].text += bytes[(index + 9)..<(end - 3)] }
                index = end
            } else if hasPrefix("<!", at: index) {
                throw .malformed(.declaration, offset: index)
            } else if hasPrefix("</", at: index) {
                let (name, nameEnd) = try self.name(at: index + 2)
                var cursor = skipSpace(from: nameEnd)
                guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ">") else { throw .malformed(.unterminatedTag, offset: index) }
                cursor += 1
                guard let element = open.popLast(), element.name == name else { throw .malformed(.mismatchedEndTag, offset: index) }
                let text = element.hasChildren ? "" : String(decoding: element.text, as: UTF8.self)
                try visit(.close(name, text: text), open.count + 1)
                index = cursor
            } else {
                let (name, nameEnd) = try self.name(at: index + 1)
                let (tagEnd, selfClosing) = try endOfStartTag(from: nameEnd, tagStart: index)
                if open.isEmpty {
                    guard rootName == nil else { throw .malformed(.secondRoot, offset: index) }
                    if let root, name != root, name != alternative { throw .unexpectedRoot(expected: root, found: name) }
                    rootName = name
                } else {
                    open[open.count - 1].hasChildren = true
                    open[open.count - 1].text = []
                }
                guard open.count < Self.maximumDepth else { throw .malformed(.tooDeep, offset: index) }
                open.append((name, [], false))
                try visit(.open(name), open.count)
                if selfClosing {
                    open.removeLast()
                    try visit(.close(name, text: ""), open.count + 1)
                }
                index = tagEnd
            }
        }
        guard open.isEmpty, let rootName else { throw .malformed(.unexpectedEnd, offset: bytes.count) }
        return rootName
    }

    // MARK: Pieces

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private func hasPrefix(_ prefix: StaticString, at index: Int) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        return prefix.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    /// The index just past the first `terminator` at or after `start`.
    private func end(of terminator: StaticString, from start: Int, _ problem: S3XMLError.Malformation) throws(S3XMLError) -> Int {
        var index = start
        while index < bytes.count {
            if hasPrefix(terminator, at: index) { return index + terminator.utf8CodeUnitCount }
            index += 1
        }
        throw .malformed(problem, offset: start)
    }

    private func skipSpace(from start: Int) -> Int {
        var index = start
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
        return index
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        isSpace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "<")
            || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }

    /// A tag's local name (after the last `:`) and the index past its qualified name.
    private func name(at start: Int) throws(S3XMLError) -> (String, Int) {
        var end = start
        while end < bytes.count, !Self.endsName(bytes[end]) { end += 1 }
        guard end > start else { throw .malformed(end < bytes.count ? .badName : .unterminatedTag, offset: start) }
        let local = (bytes[start..<end].lastIndex(of: UInt8(ascii: ":")).map { $0 + 1 }) ?? start
        guard local < end else { throw .malformed(.badName, offset: start) }
        return (String(decoding: bytes[local..<end], as: UTF8.self), end)
    }

    /// Past the attributes to the `>` or `/>`: the index after it, and whether it was `/>`.
    private func endOfStartTag(from start: Int, tagStart: Int) throws(S3XMLError) -> (Int, Bool) {
        var index = start
        while true {
            index = skipSpace(from: index)
            guard index < bytes.count else { throw .malformed(.unterminatedTag, offset: tagStart) }
            if bytes[index] == UInt8(ascii: ">") { return (index + 1, false) }
            if hasPrefix("/>", at: index) { return (index + 2, true) }
            // An attribute: NAME = "VALUE" or 'VALUE'.
            let (_, nameEnd) = try name(at: index)
            index = skipSpace(from: nameEnd)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw .malformed(.badAttribute, offset: index) }
            index = skipSpace(from: index + 1)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw .malformed(.badAttribute, offset: index)
            }
            guard let close = bytes[(index + 1)...].firstIndex(of: bytes[index]) else {
                throw .malformed(.unterminatedTag, offset: tagStart)
            }
            index = close + 1
        }
    }

    /// Appends the text in `range` with its entities decoded.
    private func decodeText(_ range: Range<Int>, into text: inout [UInt8]) throws(S3XMLError) {
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "&") else {
                text.append(byte)
                index += 1
                continue
            }
            // The longest entity read: `&#x10FFFF;` is 10 bytes.
            let window = bytes[(index + 1)..<min(range.upperBound, index + 12)]
            guard let semicolon = window.firstIndex(of: UInt8(ascii: ";")) else { throw .malformed(.badEntity, offset: index) }
            let entity = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            guard let scalar = Self.entity(entity) else { throw .malformed(.badEntity, offset: index) }
            text += Array(String(Character(scalar)).utf8)
            index = semicolon + 1
        }
    }

    /// The character of `&NAME;`, `&#NN;` or `&#xHH;` (one XML allows in text), or nil.
    static func entity(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "quot": return "\""
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "apos": return "'"
        default: break
        }
        let digits: Substring
        let radix: Int
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            (digits, radix) = (name.dropFirst(2), 16)
        } else if name.hasPrefix("#") {
            (digits, radix) = (name.dropFirst(), 10)
        } else {
            return nil
        }
        guard (1...8).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isHexDigit }),
              let value = UInt32(digits, radix: radix), let scalar = Unicode.Scalar(value),
              value >= 0x20 || value == 0x09 || value == 0x0A || value == 0x0D else { return nil }
        return scalar
    }
}
