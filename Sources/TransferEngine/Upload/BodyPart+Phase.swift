extension BodyPart {
    /// Where the reader is inside a part; each phase carries its own offset.
    enum Phase: Equatable {
        case boundary(offset: Int)
        case headers(offset: Int)
        case body(offset: Int64)
        /// After the last part: `\r\n--BOUNDARY--\r\n`.
        case closingBoundary(offset: Int)
        case done
    }
}
