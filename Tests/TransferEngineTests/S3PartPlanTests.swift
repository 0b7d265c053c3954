import Testing
@testable import TransferEngine

@Suite struct S3PartPlanTests {
    static let mib: Int64 = 1 << 20
    static let gib: Int64 = 1 << 30
    static let tib: Int64 = 1 << 40

    @Test func anEmptyFileIsOneEmptyPart() throws {
        let plan = try S3PartPlan(fileSize: 0)
        #expect(plan.partSize == 8 * Self.mib)
        #expect(plan.partCount == 1)
        #expect(plan.range(ofPart: 1) == 0..<0)
        #expect(plan.range(ofPart: 2) == nil)
        #expect(S3PartPlan.fitsSinglePut(fileSize: 0))
    }

    @Test func exactlyOnePart() throws {
        let plan = try S3PartPlan(fileSize: 8 * Self.mib)
        #expect(plan.partCount == 1)
        #expect(plan.range(ofPart: 1) == 0..<(8 * Self.mib))
    }

    @Test func oneByteMoreIsASecondPart() throws {
        let plan = try S3PartPlan(fileSize: 8 * Self.mib + 1)
        #expect(plan.partCount == 2)
        #expect(plan.range(ofPart: 2) == (8 * Self.mib)..<(8 * Self.mib + 1))
        #expect(plan.range(ofPart: 0) == nil)
        #expect(plan.range(ofPart: -1) == nil)
        #expect(plan.range(ofPart: Int.max) == nil)
    }

    @Test func largeFilesGrowThePartSizeToAWholeMiB() throws {
        let plan = try S3PartPlan(fileSize: 80 * Self.gib)
        #expect(plan.partSize == 9 * Self.mib, "8 MiB parts would be 10,240 of them")
        #expect(plan.partCount == 9103)
        #expect(plan.range(ofPart: 9103)?.upperBound == 80 * Self.gib)
    }

    @Test func theLargestObject() throws {
        let plan = try S3PartPlan(fileSize: 5 * Self.tib)
        #expect(plan.partSize == 525 * Self.mib)
        #expect(plan.partCount <= S3PartPlan.maximumParts)
        #expect(plan.range(ofPart: plan.partCount)?.upperBound == 5 * Self.tib)
        #expect(throws: S3PartPlanError.objectTooLarge(5 * Self.tib + 1)) { try S3PartPlan(fileSize: 5 * Self.tib + 1) }
        #expect(throws: S3PartPlanError.objectTooLarge(.max)) { try S3PartPlan(fileSize: .max) }
        #expect(throws: S3PartPlanError.negativeSize(-1)) { try S3PartPlan(fileSize: -1) }
    }

    @Test func aRequestedPartSizeIsKeptWithinS3sLimits() throws {
        #expect(try S3PartPlan(fileSize: 100 * Self.mib, requestedPartSize: 5 * Self.mib).partCount == 20)
        #expect(try S3PartPlan(fileSize: 100 * Self.gib, requestedPartSize: 5 * Self.mib).partSize == 11 * Self.mib,
                "grown: 5 MiB parts would be too many")
        #expect(try S3PartPlan(fileSize: 1, requestedPartSize: 5 * Self.gib).partSize == 5 * Self.gib)
        #expect(throws: S3PartPlanError.partSize(5 * Self.mib - 1)) {
            try S3PartPlan(fileSize: 1, requestedPartSize: 5 * Self.mib - 1)
        }
        #expect(throws: S3PartPlanError.partSize(5 * Self.gib + 1)) {
            try S3PartPlan(fileSize: 1, requestedPartSize: 5 * Self.gib + 1)
        }
        #expect(S3PartPlanError.partSize(1).message.contains("5 MiB to 5 GiB"))
    }

    @Test func partsCoverTheFileWithoutGapsOrOverlaps() throws {
        for size in [1, 5 * Self.mib - 1, 5 * Self.mib, 17 * Self.mib + 3, 100 * Self.mib] {
            let plan = try S3PartPlan(fileSize: size, requestedPartSize: 5 * Self.mib)
            var next: Int64 = 0
            for number in 1...plan.partCount {
                let range = try #require(plan.range(ofPart: number))
                #expect(range.lowerBound == next)
                #expect(range.count <= plan.partSize && (number == plan.partCount || range.count >= S3PartPlan.minimumPartSize))
                next = range.upperBound
            }
            #expect(next == size)
        }
    }

    @Test func theSinglePutThreshold() {
        #expect(S3PartPlan.fitsSinglePut(fileSize: 16 * Self.mib))
        #expect(!S3PartPlan.fitsSinglePut(fileSize: 16 * Self.mib + 1))
        #expect(S3PartPlan.fitsSinglePut(fileSize: 100, threshold: 100))
        #expect(!S3PartPlan.fitsSinglePut(fileSize: 101, threshold: 100))
    }
}
