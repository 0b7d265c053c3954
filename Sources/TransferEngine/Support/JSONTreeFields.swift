/// Reads an object of a `JSONTree` by hand, for the few types too numerous for `Decodable`'s
/// containers: a manifest's entries, 250 to a request, decoded on the loop thread, spent ~6 µs
/// each in generic metadata lookups, boxes and one search per declared key (BENCHMARKS.md).
/// A type read this way walks its object's members once and gives exactly the value its
/// `Decodable` conformance gives. Anything else — a type that does not match, a null where a
/// value is needed, a required member missing, a number not plainly an integer — throws the
/// error that hands the whole document to `JSONDecoder` (`JSONTreeDecoder`), which decides and
/// words it. Thread: a value.
struct JSONTreeFields {
    let members: [(key: String, value: JSONTree)]
    let state: JSONTreeState

    /// The object `tree` is, or the hand-over to `JSONDecoder`.
    init(_ tree: JSONTree, _ state: JSONTreeState) throws {
        guard case .object(let members) = tree else { throw state.leaveToJSONDecoder() }
        self.members = members
        self.state = state
    }

    /// The hand-over to `JSONDecoder`: this document is its to decide.
    func unsupported() -> DecodingError { state.leaveToJSONDecoder() }

    /// A required member that is absent: `Decodable` refuses the document.
    func required<T>(_ value: T?) throws -> T {
        guard let value else { throw unsupported() }
        return value
    }

    func string(_ tree: JSONTree) throws -> String {
        guard case .string(let value) = tree else { throw unsupported() }
        return value
    }

    func bool(_ tree: JSONTree) throws -> Bool {
        guard case .bool(let value) = tree else { throw unsupported() }
        return value
    }

    /// A plain integer in range, as `JSONTreeValueDecoder` reads one.
    func integer<T: FixedWidthInteger>(_ tree: JSONTree) throws -> T {
        guard case .number(let text) = tree, let value = T(text) else { throw unsupported() }
        return value
    }

    /// An enumeration by its raw word (`Decodable`'s `RawRepresentable` conformance).
    func word<T: RawRepresentable>(_ tree: JSONTree) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: try string(tree)) else { throw unsupported() }
        return value
    }

    func strings(_ tree: JSONTree) throws -> [String] {
        guard case .array(let elements) = tree else { throw unsupported() }
        return try elements.map(string)
    }

    /// Any other type, through its `Decodable` conformance over the tree.
    func decoded<T: Decodable>(_ tree: JSONTree) throws -> T {
        try JSONTreeValueDecoder(tree, state).unwrap(T.self)
    }

    /// An optional member's value: nil for null, as `decodeIfPresent` (an absent member is never
    /// read).
    func optional<T>(_ tree: JSONTree, _ read: (JSONTree) throws -> T) rethrows -> T? {
        if case .null = tree { return nil }
        return try read(tree)
    }
}
