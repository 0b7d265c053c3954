/// A manual page in roff with the man(7) macros, made from help texts (`HelpText`), so that
/// `man transferctl` says what `--help` says. Pure. Thread: any.
///
/// A program's own help becomes the page's frame: `usage:` the SYNOPSIS, its running text
/// the DESCRIPTION, and each labelled block (`options:`, `exit status: …`, `examples:`) a
/// section of that name. A subcommand's help is rendered whole, in order, under a subsection.
public struct ManPage: Sendable {
    public let name: String
    public let section: String
    private var lines: [String]

    /// `summary` is the NAME line's text after `name \-`; `version` and `manual` go in the
    /// page's header and footer (`transferd 0.1.0`, `User Commands`). There is no date: the page
    /// changes only when the help does.
    public init(name: String, section: String, summary: String, version: String, manual: String) {
        self.name = name
        self.section = section
        lines = [
            ".\\\" Generated from '\(name) --help' by '\(name) --man'. Do not edit: regenerate.",
            ".TH \(Self.quoted(name.uppercased())) \(section) \"\" \(Self.quoted(version)) \(Self.quoted(manual))",
            ".nh",    // no hyphenation: option names and paths stay whole
            ".ad l",  // ragged right
            ".SH NAME",
            Self.escape("\(name) - \(summary)"),
        ]
    }

    /// The frame of the page from the program's own help (see the type's comment).
    public mutating func addProgram(_ help: HelpText) {
        let synopses = help.usage
        if !synopses.isEmpty {
            addSection("SYNOPSIS")
            addVerbatim(synopses)
        }
        addSection("DESCRIPTION")
        for block in help.blocks {
            if case .paragraph(nil, let text) = block { addParagraph(text) }
            if case .list(nil, let items) = block { addItems(items) }
        }
        for block in help.blocks {
            switch block {
            case .usage, .paragraph(nil, _), .list(nil, _):
                continue
            case .paragraph(let label?, let text):
                addSection(label.uppercased())
                addParagraph(text)
            case .list(let label?, let items):
                addSection(label.uppercased())
                addItems(items)
            case .verbatim(let label, let text):
                addSection(label.uppercased())
                addVerbatim(text)
            }
        }
    }

    /// One subcommand's help, whole and in order, under `.SS title`.
    public mutating func addCommand(_ title: String, _ help: HelpText) {
        lines.append(".SS " + Self.quoted(title))
        for block in help.blocks {
            switch block {
            case .usage(let synopses):
                addVerbatim(synopses)
            case .paragraph(let label, let text):
                addParagraph(text, prefix: label.map { "\\fB\(Self.escape($0)):\\fR " } ?? "")
            case .list(let label, let items):
                if let label { addParagraph("", prefix: "\\fB\(Self.escape(label)):\\fR") }
                addItems(items)
            case .verbatim(let label, let text):
                addParagraph("", prefix: "\\fB\(Self.escape(label)):\\fR")
                addVerbatim(text)
            }
        }
    }

    public mutating func addSection(_ title: String) {
        lines.append(".SH " + Self.quoted(title))
    }

    /// A paragraph: `prefix` is roff already, `text` is escaped.
    public mutating func addParagraph(_ text: String, prefix: String = "") {
        lines.append(".PP")
        lines.append(Self.guarded(prefix + Self.escape(text)))
    }

    /// Tagged paragraphs: the term in bold, the description below it, indented.
    public mutating func addItems(_ items: [HelpText.Item]) {
        for item in items {
            lines.append(".TP")
            lines.append("\\fB" + Self.escape(item.term) + "\\fR")
            if !item.description.isEmpty { lines.append(Self.guarded(Self.escape(item.description))) }
        }
    }

    /// Lines shown as they are (no filling), indented.
    public mutating func addVerbatim(_ text: [String]) {
        lines += [".PP", ".RS 4", ".nf"] + text.map { Self.guarded(Self.escape($0)) } + [".fi", ".RE"]
    }

    /// `SEE ALSO` and the like: a paragraph of roff written by the caller.
    public mutating func addRoff(_ roff: String) {
        lines.append(roff)
    }

    public func render() -> String {
        lines.joined(separator: "\n") + "\n"
    }

    /// Text as roff shows it: a backslash as `\e`, a hyphen as `\-` (a minus: options stay
    /// copyable), and nothing read as a request.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A line of text that starts with `.` or `'` would be read as a request: `\&` keeps it text.
    private static func guarded(_ line: String) -> String {
        line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : line
    }

    /// An argument of a macro, in double quotes (a quote inside doubled, as groff reads it).
    private static func quoted(_ text: String) -> String {
        "\"" + escape(text).split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
