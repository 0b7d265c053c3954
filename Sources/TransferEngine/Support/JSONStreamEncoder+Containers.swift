/// The `Encoder` and containers of `JSONStreamEncoder`: each writes into the shared
/// `JSONStream` at the depth of the container it stands for.

struct StreamEncoder: Encoder {
    let stream: JSONStream
    /// The depth of the container this encoder's value is in: its own is the next one.
    let base: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(stream: JSONStream) {
        self.stream = stream
        base = stream.depth
    }

    /// A second keyed container of the same encoder goes on filling the object the first one
    /// opened (as with `JSONEncoder`: a wrapper's `encode(to:)` can add keys to a value's).
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if stream.isObject(at: base + 1) {
            stream.close(downTo: base + 1)
            return KeyedEncodingContainer(KeyedStream<Key>(stream: stream, depth: base + 1))
        }
        return KeyedEncodingContainer(KeyedStream<Key>(stream: stream, depth: stream.openContainer(UInt8(ascii: "{"), UInt8(ascii: "}"))))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedStream(stream: stream, depth: stream.openContainer(UInt8(ascii: "["), UInt8(ascii: "]")))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueStream(stream: stream)
    }
}

struct KeyedStream<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let stream: JSONStream
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    /// The next element: `"key":`, its value to follow.
    private func slot(_ key: Key) {
        stream.element(of: depth)
        stream.key(key)
    }

    mutating func encodeNil(forKey key: Key) throws {
        slot(key)
        stream.null()
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        slot(key)
        try stream.write(value)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        slot(key)
        stream.bool(value)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        slot(key)
        stream.string(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        slot(key)
        try stream.double(value)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        slot(key)
        try stream.double(Double(value))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        slot(key)
        stream.integer(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        slot(key)
        return StreamEncoder(stream: stream).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        slot(key)
        return StreamEncoder(stream: stream).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: Key(stringValue: "super")!)
    }

    /// The encoder must write exactly one value (nothing written leaves the key without one).
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        slot(key)
        return StreamEncoder(stream: stream)
    }
}

struct UnkeyedStream: UnkeyedEncodingContainer {
    let stream: JSONStream
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    init(stream: JSONStream, depth: Int) {
        self.stream = stream
        self.depth = depth
    }

    /// The next element, its value to follow.
    private mutating func slot() {
        stream.element(of: depth)
        count += 1
    }

    mutating func encodeNil() throws {
        slot()
        stream.null()
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        slot()
        try stream.write(value)
    }

    mutating func encode(_ value: Bool) throws {
        slot()
        stream.bool(value)
    }
    mutating func encode(_ value: String) throws {
        slot()
        stream.string(value)
    }
    mutating func encode(_ value: Double) throws {
        slot()
        try stream.double(value)
    }
    mutating func encode(_ value: Float) throws {
        slot()
        try stream.double(Double(value))
    }
    mutating func encode(_ value: Int) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: Int8) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: Int16) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: Int32) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: Int64) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: UInt) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: UInt8) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: UInt16) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: UInt32) throws {
        slot()
        stream.integer(value)
    }
    mutating func encode(_ value: UInt64) throws {
        slot()
        stream.integer(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        slot()
        return StreamEncoder(stream: stream).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        slot()
        return StreamEncoder(stream: stream).unkeyedContainer()
    }

    /// The encoder must write exactly one value.
    mutating func superEncoder() -> any Encoder {
        slot()
        return StreamEncoder(stream: stream)
    }
}

struct SingleValueStream: SingleValueEncodingContainer {
    let stream: JSONStream
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { stream.null() }
    mutating func encode<T: Encodable>(_ value: T) throws { try stream.write(value) }
    mutating func encode(_ value: Bool) throws { stream.bool(value) }
    mutating func encode(_ value: String) throws { stream.string(value) }
    mutating func encode(_ value: Double) throws { try stream.double(value) }
    mutating func encode(_ value: Float) throws { try stream.double(Double(value)) }
    mutating func encode(_ value: Int) throws { stream.integer(value) }
    mutating func encode(_ value: Int8) throws { stream.integer(value) }
    mutating func encode(_ value: Int16) throws { stream.integer(value) }
    mutating func encode(_ value: Int32) throws { stream.integer(value) }
    mutating func encode(_ value: Int64) throws { stream.integer(value) }
    mutating func encode(_ value: UInt) throws { stream.integer(value) }
    mutating func encode(_ value: UInt8) throws { stream.integer(value) }
    mutating func encode(_ value: UInt16) throws { stream.integer(value) }
    mutating func encode(_ value: UInt32) throws { stream.integer(value) }
    mutating func encode(_ value: UInt64) throws { stream.integer(value) }
}
