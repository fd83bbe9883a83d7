package sessionstore

// ZstdDecodedForTest returns how many bytes zstd event-frame decodes have
// produced in this process so far.
func ZstdDecodedForTest() int64 { return zstdDecoded.Load() }

// DecodedPerReadForTest is the decoded-bytes budget of one read at limit.
func DecodedPerReadForTest(limit int64) int64 { return decodedPerRead(limit) }
