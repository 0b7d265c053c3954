/// A form part as a client asks for it (curl's `-F` syntax), before the daemon resolves it.
public struct FormField: Codable, Equatable, Sendable {
    public var name: String
    /// A text field's value.
    public var value: String?
    /// A file part's path.
    public var file: String?
    public var filename: String?
    public var contentType: String?

    public init(name: String, value: String? = nil, file: String? = nil, filename: String? = nil,
                contentType: String? = nil) {
        self.name = name
        self.value = value
        self.file = file
        self.filename = filename
        self.contentType = contentType
    }

    public struct ParseError: Error, Equatable, Sendable {
        public var message: String
    }

    /// Parses `NAME=VALUE` or `NAME=@FILE[;type=MIME][;filename=NAME]`. A file name or
    /// parameter value may be double-quoted, with `\"` and `\\` escaped inside, so it can
    /// hold `;` and `"`.
    public static func parse(_ text: String) throws(ParseError) -> FormField {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw ParseError(message: "-F '\(text)': expected NAME=VALUE or NAME=@FILE[;type=MIME][;filename=NAME]")
        }
        let name = String(text[..<equals])
        let rest = text[text.index(after: equals)...]
        if rest.first == "<" {
            throw ParseError(message: "-F '\(text)': NAME=<FILE is not supported; send the file with NAME=@FILE")
        }
        guard rest.first == "@" else { return FormField(name: name, value: String(rest)) }

        var scanner = Scanner(rest.dropFirst())
        let path = try scanner.value(stoppingAt: ";", context: text)
        guard !path.isEmpty else { throw ParseError(message: "-F '\(text)': no file after '@'") }
        var field = FormField(name: name, file: path)
        while scanner.skip(";") {
            let key = scanner.word(until: "=")
            guard scanner.skip("=") else { throw ParseError(message: "-F '\(text)': expected KEY=VALUE after ';'") }
            let value = try scanner.value(stoppingAt: ";", context: text)
            switch key.lowercased() {
            case "type": field.contentType = value
            case "filename": field.filename = value
            default: throw ParseError(message: "-F '\(text)': unknown parameter '\(key)' (use type= or filename=)")
            }
        }
        return field
    }

    /// Reads characters of an `-F` argument, honouring double quotes.
    private struct Scanner {
        private var characters: [Character]
        private var index = 0

        init(_ text: Substring) { characters = Array(text) }

        mutating func skip(_ character: Character) -> Bool {
            guard index < characters.count, characters[index] == character else { return false }
            index += 1
            return true
        }

        mutating func word(until stop: Character) -> String {
            var word = ""
            while index < characters.count, characters[index] != stop, characters[index] != ";" {
                word.append(characters[index])
                index += 1
            }
            return word.trimmingSpaces
        }

        mutating func value(stoppingAt stop: Character, context: String) throws(ParseError) -> String {
            guard skip("\"") else { return word(until: stop) }
            var value = ""
            while index < characters.count {
                let character = characters[index]
                index += 1
                switch character {
                case "\\" where index < characters.count:
                    value.append(characters[index])
                    index += 1
                case "\"":
                    guard index == characters.count || characters[index] == ";" else {
                        throw ParseError(message: "-F '\(context)': unexpected text after a closing quote")
                    }
                    return value
                default:
                    value.append(character)
                }
            }
            throw ParseError(message: "-F '\(context)': unterminated quote")
        }
    }
}
