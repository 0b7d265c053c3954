import FoundationEssentials

/// The `Decoder` of one value of a `JSONTree`, and its single-value container. Every error it
/// throws is only a signal to hand the document to `JSONDecoder` (`JSONTreeDecoder`).
struct JSONTreeValueDecoder: Decoder, SingleValueDecodingContainer {
    let tree: JSONTree
    let state: JSONTreeState

    init(_ tree: JSONTree, _ state: JSONTreeState) {
        self.tree = tree
        self.state = state
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Types `JSONDecoder` decodes its own way (with its strategies) are left to it.
    func unwrap<T: Decodable>(_ type: T.Type) throws -> T {
        if type == Data.self || type == Date.self || type == URL.self || type == Decimal.self {
            throw state.leaveToJSONDecoder()
        }
        return try T(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = tree else { throw mismatch() }
        return KeyedDecodingContainer(JSONTreeKeyedContainer<Key>(members: members, state: state))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = tree else { throw mismatch() }
        return JSONTreeUnkeyedContainer(elements: elements, state: state)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool {
        if case .null = tree { true } else { false }
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let value) = tree else { throw mismatch() }
        return value
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let value) = tree else { throw mismatch() }
        return value
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint() }
    /// Left to `JSONDecoder`: whether it rounds through a `Double` first is its own to say.
    func decode(_ type: Float.Type) throws -> Float { throw state.leaveToJSONDecoder() }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(type) }

    /// A plain integer in range; an overflow is `JSONDecoder`'s to judge, and `1.0` or `1e3`
    /// are refused (`JSONDecoder` would take them).
    private func integer<T: FixedWidthInteger>() throws -> T {
        guard case .number(let text) = tree else { throw mismatch() }
        guard let value = T(text) else {
            if text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) {
                state.fractionalInteger = text
            }
            throw state.leaveToJSONDecoder()
        }
        return value
    }

    private func floatingPoint() throws -> Double {
        guard case .number(let text) = tree else { throw mismatch() }
        guard let value = Double(text), value.isFinite else { throw state.leaveToJSONDecoder() }
        return value
    }

    private func mismatch() -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "another type"))
    }
}

/// An object's members, found by a search in order (objects of the protocol are small).
struct JSONTreeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [(key: String, value: JSONTree)]
    let state: JSONTreeState

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

    func contains(_ key: Key) -> Bool { member(key) != nil }

    private func member(_ key: Key) -> JSONTree? {
        let name = key.stringValue
        for member in members where JSONTreeParser.same(member.key, name) { return member.value }
        return nil
    }

    private func decoder(_ key: Key) throws -> JSONTreeValueDecoder {
        guard let tree = member(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "absent"))
        }
        return JSONTreeValueDecoder(tree, state)
    }

    /// nil when the key is absent or null (one search, where the protocol's default makes three).
    private func present(_ key: Key) -> JSONTreeValueDecoder? {
        guard let tree = member(key) else { return nil }
        if case .null = tree { return nil }
        return JSONTreeValueDecoder(tree, state)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder(key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).unwrap(type) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key)?.decode(type) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key)?.decode(type) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(key)?.decode(type) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(key)?.decode(type) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(key)?.decode(type) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try present(key)?.unwrap(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw state.leaveToJSONDecoder() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw state.leaveToJSONDecoder() }
}

/// An array's elements, in order.
struct JSONTreeUnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONTree]
    let state: JSONTreeState
    private(set) var currentIndex = 0

    init(elements: [JSONTree], state: JSONTreeState) {
        self.elements = elements
        self.state = state
    }

    var codingPath: [any CodingKey] { [] }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> JSONTreeValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, DecodingError.Context(codingPath: [], debugDescription: "at the end"))
        }
        defer { currentIndex += 1 }
        return JSONTreeValueDecoder(elements[currentIndex], state)
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null = try next().tree else {
            currentIndex -= 1  // not null: the element is still to be decoded
            return false
        }
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next().decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().unwrap(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { throw state.leaveToJSONDecoder() }
}
